r"""Warm start of the multiclass CSVM: a linear multiclass SVM with shifted per-class offsets.

1. Fit scikit-learn's ``LinearSVC`` on :math:`I \cup J` in feature space, once
   one-vs-rest and once Crammer-Singer (its C is C/2, as for the binary SVC).
2. For each direction matrix W, scaled by a few factors (scaling widens every
   correctly signed margin), shift the offsets: while some constrained class c
   has fewer than :math:`k_c` anchor points with margin
   :math:`f_c(x_j) - \max_{k \ne c} f_k(x_j) \ge 1`, raise :math:`b_c` by the
   :math:`k_c`-th smallest shortfall (raising :math:`b_c` moves the margins of
   class c's points up one for one and can only lower the others').
3. :math:`z_j = 1` where the margin is met; :math:`\xi_i` is the Crammer-Singer
   hinge. The feasible point with the smallest objective is kept; its objective
   is the U of :mod:`csvm_stats.multiclass.problem`.
4. Polishing, as for two classes (:mod:`csvm_stats.optimization.warmstart`): the
   Crammer-Singer SVM on I plus the anchor points kept in step 3 (weight
   ``ANCHOR_WEIGHT``) gives a new direction, which goes through steps 2 and 3
   again; the best point found is kept.

``None`` when no scale and direction meet every requirement (then the model is
solved without a start, with indicator constraints).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from csvm_stats.multiclass.certification import rival_margins
from csvm_stats.optimization.warmstart import ANCHOR_WEIGHT, MARGIN_TOL, POLISH_ROUNDS, SCALE_FACTORS

SHIFT_ROUNDS = 50


@dataclass(frozen=True)
class MulticlassStart:
    """A feasible multiclass CSVM point and its objective."""

    W: np.ndarray
    b: np.ndarray
    xi: np.ndarray
    z: np.ndarray
    objective: float


def class_margins(scores: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``f_{y_m}(x_m) - max_{k != y_m} f_k(x_m)`` for each row of ``scores`` (n, K)."""
    return rival_margins(scores)[np.arange(y.size), y]


def _directions(
    phi: np.ndarray, y: np.ndarray, C: float, n_classes: int, weight: np.ndarray | None = None,
    kinds: tuple[str, ...] = ("ovr", "crammer_singer"),
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(W, b) of a one-vs-rest and a Crammer-Singer linear SVM (every class present)."""
    out = []
    for multi_class in kinds:
        svc = LinearSVC(C=C / 2.0, multi_class=multi_class, loss="hinge" if multi_class == "ovr" else "squared_hinge",
                        dual=True, max_iter=20000, tol=1e-6, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svc.fit(phi, y, sample_weight=weight)
        W = np.zeros((n_classes, phi.shape[1]))
        b = np.zeros(n_classes)
        if n_classes == 2 and svc.coef_.shape[0] == 1:  # liblinear returns one row for two classes
            W[1], b[1] = 0.5 * svc.coef_[0], 0.5 * svc.intercept_[0]
            W[0], b[0] = -W[1], -b[1]
        else:
            W[svc.classes_], b[svc.classes_] = svc.coef_, svc.intercept_
        out.append((W, b))
    return out


def shift_offsets(
    scores_anchor: np.ndarray, y_anchor: np.ndarray, b: np.ndarray, min_counts: Mapping[int, int]
) -> np.ndarray | None:
    """Raise constrained offsets until every required anchor count holds (step 2); ``None`` if it cycles."""
    b = b.copy()
    for _ in range(SHIFT_ROUNDS):
        done = True
        for c, k in min_counts.items():
            if k == 0:
                continue
            members = y_anchor == c
            margins = class_margins(scores_anchor[members] + b, y_anchor[members])
            shortfall = np.sort(1.0 - margins)[k - 1]
            if shortfall > -MARGIN_TOL:
                b[c] += max(shortfall, 0.0) + 4 * MARGIN_TOL
                done = False
        if done:
            return b - b.mean()
    return None


def shifted_start(
    W0: np.ndarray,
    b0: np.ndarray,
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    *,
    C: float,
    weight: np.ndarray,
    min_counts: Mapping[int, int],
    anchor_index: np.ndarray,
    factors: Sequence[float] = SCALE_FACTORS,
) -> MulticlassStart | None:
    r"""Steps 2 and 3 of the module docstring for one direction matrix ``W0`` (offsets ``b0``).

    Each scaled direction ``factor * W0`` gets its offsets shifted until every
    required anchor count holds (:func:`shift_offsets`); the feasible point of
    least objective :math:`\sum_k\|w_k\|^2 + C\sum_i s_i\xi_i` is returned
    (``None``: no factor meets the requirements). z is reported on ``anchor_index``.
    """
    best = None
    for factor in factors:
        W = factor * W0
        b = shift_offsets(phi_anchor @ W.T, y_anchor, factor * b0, min_counts)
        if b is None:
            continue
        xi = np.maximum(0.0, 1.0 - class_margins(phi_train @ W.T + b, y_train))
        objective = float(np.sum(W * W) + C * weight @ xi)
        if best is None or objective < best.objective:
            margins = class_margins(phi_anchor[anchor_index] @ W.T + b, y_anchor[anchor_index])
            z = (margins >= 1.0 - MARGIN_TOL).astype(float)
            best = MulticlassStart(W, b, xi, z, objective)
    return best


def multiclass_start(
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    n_classes: int,
    *,
    C: float,
    weight: np.ndarray,
    min_counts: Mapping[int, int],
    anchor_index: np.ndarray,
) -> MulticlassStart | None:
    """The start of the module docstring; z is reported on ``anchor_index`` (the constrained anchor points)."""
    phi = np.vstack([phi_train, phi_anchor])
    y = np.r_[y_train, y_anchor].astype(int)

    def best_shift(directions, incumbent: MulticlassStart | None) -> MulticlassStart | None:
        best = incumbent
        for W0, b0 in directions:
            found = shifted_start(W0, b0, phi_train, y_train, phi_anchor, y_anchor, C=C, weight=weight,
                                  min_counts=min_counts, anchor_index=anchor_index,
                                  factors=SCALE_FACTORS if min_counts else SCALE_FACTORS[:1])
            if found is not None and (best is None or found.objective < best.objective):
                best = found
        return best

    best = best_shift(_directions(phi, y, C, n_classes, np.r_[weight, np.ones(y_anchor.size)]), None)
    if best is None or not min_counts:
        return best
    n_i = y_train.size
    for _ in range(POLISH_ROUNDS):
        kept = n_i + anchor_index[best.z > 0.5]
        rows = np.r_[np.arange(n_i), kept]
        w_rows = np.r_[weight, np.full(kept.size, ANCHOR_WEIGHT)]
        polished = best_shift(_directions(phi[rows], y[rows], C, n_classes, w_rows, ("crammer_singer",)), best)
        if polished is best or polished.objective >= best.objective * (1 - 1e-6):
            break
        best = polished
    return best
