r"""The shared fast kernel behind EBB: many weighted SVMs on bootstrap samples.

A bootstrap sample :math:`T^*_b` of the training sample T is stored as the
vector of multiplicities :math:`s_{bi}` (how often point i was drawn). For the
hinge loss a point drawn s times contributes :math:`s\,C\,\xi_i` to the
objective, so the SVM on the duplicated sample equals the SVM on the unique
points with per-point penalty :math:`s_i C` (scikit-learn's ``sample_weight``).
The fits therefore run on about 63% of the rows, on slices of one Gram matrix
per kernel parameter (computed once in :class:`~csvm_stats.probability.ebb.EBB` and shared by
every batch), through libsvm's own solver called
directly (``sklearn.svm._libsvm.fit``, the routine ``SVC.fit`` wraps), which
skips the per-call validation that dominates the cost of small fits.
``tests/test_ebb_bootstrap.py`` checks the decision values against
``sklearn.svm.SVC`` on the duplicated samples.

**C convention.** Every ``C`` here is the CSVM's: the objective is
:math:`w^\top w + C \sum_i s_i \xi_i`, which is scikit-learn's SVC with
``C / 2`` (:func:`svc_c`).

Each fitted model is a kernel expansion
:math:`f_b(x) = \sum_i \beta_{bi} k(x_i, x) + b_b` over the training points
(:class:`KernelEnsemble`); for the linear kernel the expansion is collapsed to
:math:`w_b = \sum_i \beta_{bi} x_i` (:class:`LinearEnsemble`). A point counts
as positive when :math:`f_b(x) \ge 0`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import sparse
from sklearn.metrics import roc_auc_score
from sklearn.svm import _libsvm

from csvm_stats.optimization.kernels import Kernel

RELIABILITIES: tuple[str, ...] = ("accuracy", "auc", "gmean")
LIBSVM_TOL = 1e-3
"""libsvm's stopping tolerance, the default of ``sklearn.svm.SVC``."""
LIBSVM_MAX_ITER = 100_000
"""Iteration cap per fit. libsvm needs very many iterations for a large C on
(nearly) separable data (minutes per fit on banknote at C = 32); a fit that
stops at the cap is counted as not converged and reported by the caller."""


def svc_c(C: float) -> float:
    """scikit-learn's ``SVC(C=...)`` equivalent of the CSVM's ``C`` (objective ``w'w + C sum xi``)."""
    return C / 2.0


def bootstrap_multiplicities(y: np.ndarray, n_bootstrap: int, seed: np.random.SeedSequence) -> np.ndarray:
    """Multiplicities ``S[b, i]`` of ``n_bootstrap`` stratified bootstrap samples.

    Each class is resampled with replacement to its own size, so every sample
    holds both classes (a plain bootstrap of a small sample can miss a class and
    then no SVM can be fitted). Row b is drawn from the b-th child of ``seed``,
    so it does not depend on how the rows are later split among workers, and
    raising ``n_bootstrap`` keeps the first rows.
    """
    classes = [np.flatnonzero(y == label) for label in (-1, 1)]
    n = y.shape[0]
    rows = np.zeros((n_bootstrap, n), dtype=np.int32)
    for b, child in enumerate(seed.spawn(n_bootstrap)):
        rng = np.random.default_rng(child)
        for members in classes:
            drawn = members[rng.integers(0, members.size, members.size)]
            rows[b] += np.bincount(drawn, minlength=n).astype(np.int32)
    return rows


def fit_weighted_svc(
    K: np.ndarray, y: np.ndarray, weight: np.ndarray, C: float, tol: float = LIBSVM_TOL, max_iter: int = LIBSVM_MAX_ITER
) -> tuple[np.ndarray, float, bool]:
    r"""Solve :math:`\min w^\top w + C \sum_i s_i \xi_i` on a precomputed Gram matrix.

    ``K`` is the Gram matrix of the m points, ``y`` their labels in {-1, +1},
    ``weight`` the multiplicities :math:`s_i > 0`. Returns ``(beta, b, converged)``
    with :math:`f(x) = \sum_i \beta_i k(x_i, x) + b`, :math:`\beta_i = \alpha_i y_i`;
    ``converged`` is False when libsvm stopped at ``max_iter`` (-1: no cap).
    No input checking: callers pass clean float64 arrays.
    """
    _libsvm.set_verbosity_wrap(0)  # libsvm's print switch is process-wide; SVC.fit sets it the same way
    result = _libsvm.fit(
        np.ascontiguousarray(K),
        (y > 0).astype(np.float64),
        svm_type=0,
        kernel="precomputed",
        C=svc_c(C),
        tol=tol,
        sample_weight=weight.astype(np.float64),
        class_weight=np.empty(0),
        max_iter=max_iter,
    )
    support, dual_coef, intercept, fit_status = result[0], result[3], result[4], result[7]
    beta = np.zeros(y.shape[0])
    # libsvm labels the first class (here -1, coded 0) as its "+1": flip both signs
    beta[support] = -dual_coef[0]
    return beta, -float(intercept[0]), fit_status == 0


@dataclass(frozen=True)
class LinearEnsemble:
    """B linear decision functions ``f_b(x) = x' w_b + b_b`` (rows of ``weights``)."""

    weights: np.ndarray
    intercepts: np.ndarray

    @property
    def n_models(self) -> int:
        return self.intercepts.shape[0]

    def scores(self, X: np.ndarray) -> np.ndarray:
        """Score matrix of shape (n_points, B)."""
        return X @ self.weights.T + self.intercepts


@dataclass(frozen=True)
class KernelEnsemble:
    """B kernel expansions ``f_b(x) = sum_i coef[b, i] k(reference_i, x) + b_b``."""

    kernel: Kernel
    reference: np.ndarray = field(repr=False)
    coef: sparse.csr_matrix = field(repr=False)
    intercepts: np.ndarray

    @property
    def n_models(self) -> int:
        return self.intercepts.shape[0]

    @cached_property
    def _support(self) -> tuple[np.ndarray, np.ndarray]:
        """Reference points used by any model, and the dense (used, B) coefficient block."""
        used = np.unique(self.coef.indices)
        return self.reference[used], self.coef[:, used].T.toarray()

    def scores(self, X: np.ndarray) -> np.ndarray:
        """Score matrix of shape (n_points, B)."""
        points, dense = self._support
        return self.kernel(X, points) @ dense + self.intercepts


Ensemble = LinearEnsemble | KernelEnsemble


def batch_params(kernel: Kernel, X: np.ndarray, coef: np.ndarray) -> np.ndarray | sparse.csr_matrix:
    """Compact model rows from expansion coefficients ``coef`` (rows, n) over ``X``."""
    return coef @ X if kernel.is_linear else sparse.csr_matrix(coef)


def assemble_ensemble(
    kernel: Kernel, X: np.ndarray, params: list[np.ndarray | sparse.csr_matrix], intercepts: list[np.ndarray]
) -> Ensemble:
    """One ensemble from the model rows of several batches, in order."""
    b0 = np.concatenate(intercepts)
    if kernel.is_linear:
        return LinearEnsemble(np.vstack(params), b0)
    return KernelEnsemble(kernel, X, sparse.vstack(params).tocsr(), b0)


def reliability_score(y: np.ndarray, scores: np.ndarray, kind: str) -> float:
    r"""Performance of one model on held-out points (the out-of-bag sample).

    ``accuracy``: share with :math:`\operatorname{sign} f = y` (f >= 0 is +1);
    ``auc``: area under the ROC curve of the scores; ``gmean``:
    :math:`\sqrt{TPR \cdot TNR}`. NaN when the held-out points do not allow it
    (none at all; a single class for ``auc`` and ``gmean``).
    """
    if y.size == 0:
        return float("nan")
    predicted = np.where(scores >= 0.0, 1, -1)
    if kind == "accuracy":
        return float(np.mean(predicted == y))
    positive, negative = y > 0, y < 0
    if not (positive.any() and negative.any()):
        return float("nan")
    if kind == "auc":
        return float(roc_auc_score(y, scores))
    tpr = np.mean(predicted[positive] == 1)
    tnr = np.mean(predicted[negative] == -1)
    return float(np.sqrt(tpr * tnr))


@dataclass(frozen=True)
class BatchFits:
    """Models of one batch of bootstrap samples for several C values (one kernel).

    ``params[c]`` holds the batch's models for ``C_values[c]``, one row each:
    ``w`` for the linear kernel, the expansion over the training points (sparse)
    otherwise; ``intercepts[c]`` their intercepts; ``reliability[c, b]`` is
    model b's out-of-bag score (NaN when undefined or not fitted); ``unconverged``
    counts the SVM fits stopped at :data:`LIBSVM_MAX_ITER`. The training data
    are not sent back: :func:`assemble_ensemble` adds them in the caller.
    """

    params: list[np.ndarray | sparse.csr_matrix]
    intercepts: list[np.ndarray]
    reliability: np.ndarray
    unconverged: int


def fit_svm_batch(
    X: np.ndarray,
    y: np.ndarray,
    multiplicities: np.ndarray,
    kernel: Kernel,
    C_values: np.ndarray,
    reliability: str,
    tol: float = LIBSVM_TOL,
    gram: np.ndarray | None = None,
) -> BatchFits:
    """Fit the weighted SVM of every bootstrap row of ``multiplicities`` for every C.

    The Gram matrix of the training points (``gram``, computed here when not
    given) is sliced for every fit; each model is scored on its out-of-bag
    points with :func:`reliability_score`.
    """
    K = kernel(X, X) if gram is None else gram
    n_rows, n = multiplicities.shape
    coef = np.zeros((len(C_values), n_rows, n))
    intercepts = np.zeros((len(C_values), n_rows))
    rel = np.full((len(C_values), n_rows), np.nan)
    unconverged = 0
    for b, weight in enumerate(multiplicities):
        inbag = np.flatnonzero(weight)
        oob = np.flatnonzero(weight == 0)
        K_in = K[np.ix_(inbag, inbag)]
        K_oob = K[np.ix_(oob, inbag)]
        for c, C in enumerate(C_values):
            beta, b0, converged = fit_weighted_svc(K_in, y[inbag], weight[inbag], float(C), tol)
            unconverged += not converged
            coef[c, b, inbag] = beta
            intercepts[c, b] = b0
            rel[c, b] = reliability_score(y[oob], K_oob @ beta + b0, reliability)
    params = [batch_params(kernel, X, coef[c]) for c in range(len(C_values))]
    return BatchFits(params, list(intercepts), rel, unconverged)


RATE_CLASSES: dict[str, int] = {"tpr": 1, "tnr": -1, "acc": 0}
"""Anchor class a rate constraint counts (0: all anchor points)."""
SVM_SOLUTION = "svm solution feasible"
"""Status of a constrained fit settled by the unconstrained SVM (feasible, hence optimal)."""


@dataclass(frozen=True)
class ConstrainedFitRecord:
    """One CSVM fit of CEBB2: bootstrap row, C index, outcome and anchor counts.

    ``status`` is a :class:`csvm_stats.optimization.solvers.Status` value, :data:`SVM_SOLUTION`,
    or the error class name when the engine raised (``fitted`` is then False
    and the model is left out of the ensemble). ``met[kind]`` counts the anchor points of the class
    behind ``kind`` with margin :math:`y f(x) \\ge 1`; ``required[kind]`` is
    the count the constraint asked for.
    """

    bootstrap: int
    c_index: int
    status: str
    fitted: bool
    optimal: bool
    required: dict[str, int]
    met: dict[str, int]
    wall_time: float


def margin_counts(y: np.ndarray, margins: np.ndarray, kinds: list[str], slack: float = 1e-6) -> dict[str, int]:
    """Anchor points per rate kind whose margin ``y f(x)`` reaches ``1 - slack``."""
    ok = margins >= 1.0 - slack
    counts = {}
    for kind in kinds:
        label = RATE_CLASSES[kind]
        members = np.ones_like(ok) if label == 0 else (y == label)
        counts[kind] = int(np.sum(ok & members))
    return counts


def fit_csvm_batch(
    X: np.ndarray,
    y: np.ndarray,
    multiplicities: np.ndarray,
    first_row: int,
    kernel: Kernel,
    C_values: np.ndarray,
    reliability: str,
    min_counts_per_row: list[dict[str, int]],
    solver: str,
    time_limit: float,
    big_m: float | None,
) -> tuple[BatchFits, list[ConstrainedFitRecord], np.ndarray]:
    r"""CEBB2's fits: the CSVM on each bootstrap sample, anchors = its distinct points.

    Training sample I: the distinct in-bag points with their multiplicities;
    anchor sample J: the same distinct points, each carrying one indicator
    (the constraint of the EBB paper's problem (7) is on the training records).
    When the weighted SVM (converged) already has margin 1 on the required number of
    anchors (and, with a big-M model, margin at least 1 - M on all), it is
    feasible for the CSVM and optimal, because the CSVM only adds constraints
    to the same objective; the MIQP is then skipped. Otherwise the engine
    solves it under ``time_limit`` with its warm start, one thread per fit.

    Returns the batch's models (``params[c]`` keeps only the rows that
    produced a model; ``fitted[c, b]`` says which), the per-fit records and
    the ``fitted`` mask.
    """
    from csvm_stats.optimization.engine import fit_csvm
    from csvm_stats.exceptions import InfeasibleConstraintsError, NoSolutionError, SolverError
    from csvm_stats.optimization.solvers import SolverOptions, Status

    K = kernel(X, X)
    options = SolverOptions(time_limit=time_limit, threads=1)
    n_rows, n = multiplicities.shape
    # linear kernel: models kept as w (p columns); other kernels: expansions over the n training points
    width = X.shape[1] if kernel.is_linear else n
    params = np.zeros((len(C_values), n_rows, width))
    intercepts = np.zeros((len(C_values), n_rows))
    rel = np.full((len(C_values), n_rows), np.nan)
    fitted = np.zeros((len(C_values), n_rows), dtype=bool)
    records: list[ConstrainedFitRecord] = []
    for b, weight in enumerate(multiplicities):
        inbag, oob = np.flatnonzero(weight), np.flatnonzero(weight == 0)
        X_in, y_in, s_in = X[inbag], y[inbag], weight[inbag].astype(float)
        K_in = K[np.ix_(inbag, inbag)]
        required = min_counts_per_row[b]
        kinds = list(required)
        for c, C in enumerate(C_values):
            beta, b0, converged = fit_weighted_svc(K_in, y_in, s_in, float(C))
            margins = y_in * (K_in @ beta + b0)
            met = margin_counts(y_in, margins, kinds)
            within_m = big_m is None or bool(np.all(margins >= 1.0 - big_m))
            if converged and within_m and all(met[k] >= required[k] for k in kinds):
                status, optimal, seconds = SVM_SOLUTION, True, 0.0
                expansion = np.zeros(n)
                expansion[inbag] = beta
                param = beta @ X_in if kernel.is_linear else expansion
            else:
                try:
                    fit = fit_csvm(
                        X_in, y_in, X_in, y_in, C=float(C), kernel=kernel, min_counts=required,
                        big_m=big_m, sample_weight=s_in, solver=solver, options=options,
                    )
                except (InfeasibleConstraintsError, NoSolutionError, SolverError) as error:
                    records.append(
                        ConstrainedFitRecord(first_row + b, c, type(error).__name__, False, False, required, {}, 0.0)
                    )
                    continue
                b0 = fit.intercept
                if kernel.is_linear:
                    param = fit.coef
                else:
                    # reference points of the fit are [X_in; X_in] (I then J): add the two halves
                    halves = fit.feature_map.expansion_coefficients(fit.coef)
                    param = np.zeros(n)
                    param[inbag] = halves[: inbag.size] + halves[inbag.size :]
                met = margin_counts(y_in, y_in * fit.decision_function(X_in), kinds)
                status = fit.record.status.value
                optimal, seconds = fit.record.status is Status.OPTIMAL, fit.record.wall_time
            params[c, b] = param
            intercepts[c, b] = b0
            fitted[c, b] = True
            oob_scores = X[oob] @ param + b0 if kernel.is_linear else K[oob] @ param + b0
            rel[c, b] = reliability_score(y[oob], oob_scores, reliability)
            records.append(ConstrainedFitRecord(first_row + b, c, status, True, optimal, required, met, seconds))
    kept = [params[c][fitted[c]] for c in range(len(C_values))]
    rows = [p if kernel.is_linear else sparse.csr_matrix(p) for p in kept]
    return BatchFits(rows, [intercepts[c][fitted[c]] for c in range(len(C_values))], rel, 0), records, fitted
