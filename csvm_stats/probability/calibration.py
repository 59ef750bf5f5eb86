r"""Baseline SVM probabilities and the Brier scores used to compare them with EBB.

* **Platt scaling** as scikit-learn recommends since ``SVC(probability=True)``
  was deprecated: ``CalibratedClassifierCV(SVC(...), method="sigmoid",
  ensemble=False)`` - a sigmoid of the SVM score fitted on cross-validated
  scores, applied to the SVM refitted on all the training data.
* **Isotonic calibration**: the same with ``method="isotonic"``.
* **Sollich (2002)**, plug-in version: reading the SVM objective
  :math:`\tfrac12\|w\|^2 + C\sum_i \ell(y_i f(x_i))` (hinge loss
  :math:`\ell(z) = \max(0, 1 - z)`, scikit-learn's C) as a negative log
  posterior with the normalised likelihood
  :math:`Q(y \mid f) = e^{-C \ell(y f)} / (e^{-C\ell(f)} + e^{-C\ell(-f)})`
  gives :math:`P(y=+1 \mid x) = \sigma\big(C\,[\ell(-f) - \ell(f)]\big)` with
  :math:`f` the fitted SVM's decision value and :math:`\sigma` the logistic
  function. Sollich also averages over the posterior of :math:`f` (a Gaussian
  process computation); that average is not implemented - the plug-in uses
  the maximum a posteriori :math:`f` only.
* **Tao et al. (2005)** (posterior probability SVMs) is *not* implemented: the
  public description does not pin down how the EBB paper turned it into a
  probability for a new point or what its parameter r is.

Scores of probabilities (:func:`probability_scores`): Brier, log loss (with
probabilities clipped to ``[LOG_LOSS_CLIP, 1 - LOG_LOSS_CLIP]`` so that a 0 or
1 on the wrong side costs a finite amount), the expected calibration error
over ten equal-width bins, :math:`\sum_b (n_b/n)\,|\bar y_b - \bar p_b|`,
and, when the true probabilities are known (simulations), the mean squared
error to them.

The tuning of C for the baselines (:func:`tune_svc`) is a cross-validated grid
search by accuracy over a grid in the CSVM convention (``SVC(C=C/2)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from csvm_stats.probability.bootstrap import svc_c
from csvm_stats.exceptions import DataError

CALIBRATION_METHODS: dict[str, str] = {"platt": "sigmoid", "isotonic": "isotonic"}


@dataclass(frozen=True)
class BrierScores:
    """Mean squared error of P(y=+1|x) against the 0/1 label: overall and per class.

    ``positive`` is the mean of :math:`(1 - \\hat p)^2` over the positive
    points (the paper's MSE for the positive class), ``negative`` the mean of
    :math:`\\hat p^2` over the negative points.
    """

    overall: float
    positive: float
    negative: float


def brier_scores(y: np.ndarray, p_positive: np.ndarray) -> BrierScores:
    """Brier scores of probabilities ``p_positive`` for labels ``y`` in {-1, +1}."""
    y = np.asarray(y)
    p = np.asarray(p_positive, dtype=float)
    if y.shape != p.shape:
        raise DataError(f"y has shape {y.shape} but the probabilities have shape {p.shape}; pass one per point.")
    if not np.isin(y, (-1, 1)).all():
        raise DataError("y must be coded -1/+1 (positive class +1).")
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise DataError("probabilities must lie in [0, 1] without NaN.")
    error = (p - (y > 0)) ** 2
    pos, neg = y > 0, y < 0
    return BrierScores(
        float(error.mean()),
        float(error[pos].mean()) if pos.any() else float("nan"),
        float(error[neg].mean()) if neg.any() else float("nan"),
    )


LOG_LOSS_CLIP = 1e-4
ECE_BINS = 10


def probability_scores(y: np.ndarray, p_positive: np.ndarray, p_true: np.ndarray | None = None) -> dict[str, float]:
    """Brier, log loss, expected calibration error and (if ``p_true`` is given) the MSE to the truth."""
    brier = brier_scores(y, p_positive)
    p = np.asarray(p_positive, dtype=float)
    hit = (np.asarray(y) > 0).astype(float)
    q = np.clip(p, LOG_LOSS_CLIP, 1.0 - LOG_LOSS_CLIP)
    bins = np.minimum((p * ECE_BINS).astype(int), ECE_BINS - 1)
    counts = np.bincount(bins, minlength=ECE_BINS)
    gaps = np.abs(np.bincount(bins, weights=hit - p, minlength=ECE_BINS))
    out = {
        "brier": brier.overall,
        "log_loss": float(-np.mean(hit * np.log(q) + (1.0 - hit) * np.log(1.0 - q))),
        "ece": float(gaps.sum() / counts.sum()),
    }
    if p_true is not None:
        out["mse_true"] = float(np.mean((p - np.asarray(p_true, dtype=float)) ** 2))
    return out


def tune_svc(
    X: np.ndarray,
    y: np.ndarray,
    C_grid: np.ndarray,
    *,
    kernel: str = "linear",
    gamma="scale",
    folds: int = 10,
    seed: int = 0,
    max_iter: int = -1,
) -> float:
    """The C of ``C_grid`` (CSVM convention) with the best cross-validated accuracy.

    ``max_iter`` caps libsvm's iterations per fit (-1: no cap), as in ``SVC``.
    """
    search = GridSearchCV(
        SVC(kernel=kernel, gamma=gamma, max_iter=max_iter),
        {"C": [svc_c(C) for C in C_grid]},
        scoring="accuracy",
        cv=StratifiedKFold(folds, shuffle=True, random_state=seed),
    )
    search.fit(X, y)
    return 2.0 * float(search.best_params_["C"])


def calibrated_svc(
    method: str, C: float, *, kernel: str = "linear", gamma="scale", folds: int = 5, max_iter: int = -1
) -> CalibratedClassifierCV:
    """Unfitted Platt (``"platt"``) or isotonic (``"isotonic"``) calibrated SVC with CSVM-convention C."""
    if method not in CALIBRATION_METHODS:
        raise DataError(f"method must be one of {sorted(CALIBRATION_METHODS)}, got {method!r}.")
    return CalibratedClassifierCV(
        SVC(kernel=kernel, C=svc_c(C), gamma=gamma, max_iter=max_iter),
        method=CALIBRATION_METHODS[method],
        cv=folds,
        ensemble=False,
    )


def sollich_probability(decision: np.ndarray, C_svc: float) -> np.ndarray:
    r"""Sollich's plug-in :math:`P(y=+1 \mid x) = \sigma(C[\ell(-f) - \ell(f)])` (module docstring).

    ``C_svc`` is scikit-learn's C (the CSVM's C / 2). The argument
    :math:`\ell(-f) - \ell(f)` equals :math:`2f` for :math:`|f| \le 1`,
    :math:`1 + f` above and :math:`f - 1` below.
    """
    f = np.asarray(decision, dtype=float)
    hinge_gap = np.maximum(0.0, 1.0 + f) - np.maximum(0.0, 1.0 - f)
    return 1.0 / (1.0 + np.exp(-C_svc * hinge_gap))


def sollich_svc_probabilities(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    C: float,
    *,
    kernel: str = "linear",
    gamma="scale",
    max_iter: int = -1,
) -> np.ndarray:
    """Fit the SVM (CSVM-convention C) and return Sollich's plug-in P(y=+1|x) on ``X_test``."""
    svm = SVC(kernel=kernel, C=svc_c(C), gamma=gamma, max_iter=max_iter).fit(X_train, y_train)
    return sollich_probability(svm.decision_function(X_test), svc_c(C))
