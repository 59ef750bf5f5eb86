r"""Valid bounds on every CSVM solution that is at least as good as a known one.

Let :math:`F(w, b) = w^\top w + C \sum_{i \in I} s_i\, \mathrm{hinge}_i(w, b)`,
the CSVM objective with the optimal slacks. Every feasible CSVM point is a
point of the plain SVM on I, so two facts hold for any CSVM solution with
:math:`F \le U` (U: the warm start's objective):

1. *A ball for w.* F is jointly convex and 2-strongly convex in w, so for its
   minimiser :math:`(w^*, b^*)`, :math:`F(w, b) \ge F^* + \|w - w^*\|^2`. With
   an approximate SVM solution :math:`\tilde w` of primal value P and a dual
   value D (weak duality: :math:`D \le F^*`), also
   :math:`\|\tilde w - w^*\|^2 \le P - D`, hence
   :math:`\|w - \tilde w\| \le \rho = \sqrt{U - D} + \sqrt{P - D}`. Without an
   SVM reference the ball is :math:`\|w\| \le \sqrt U` (from
   :math:`F \ge w^\top w`).
2. *An interval for b.* With :math:`u_i^\pm = \tilde w^\top\phi_i \pm \rho
   \|\phi_i\|` the range of :math:`w^\top\phi_i` over the ball and
   :math:`m = \max(0, \|\tilde w\| - \rho)^2` the least :math:`w^\top w` on it,
   :math:`C \sum_{i \in I_+} s_i (1 - u_i^+ - b)_+ \le U - m` must hold, which
   gives :math:`b \ge b_{lo}`; symmetrically the negatives give
   :math:`b \le b_{hi}`.

From these, every anchor margin :math:`y_j(w^\top\phi_j + b)` lies in a known
interval :math:`[\ell_j, h_j]`. Then :math:`M_j = 1 - \ell_j` is a valid
big-M constant, :math:`z_j = 1` can be fixed when :math:`\ell_j \ge 1` (the
constraint always holds) and :math:`z_j = 0` when :math:`h_j < 1` (it never
does). None of this removes a solution with objective at most U.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UPPER_SLACK = 1e-7  # relative inflation of U and deflation of D against rounding
BISECTION_STEPS = 200


@dataclass(frozen=True)
class SVMReference:
    """An approximate plain SVM on I: direction, intercept, primal value P, dual value D <= F*."""

    w: np.ndarray
    b: float
    primal: float
    dual: float


@dataclass(frozen=True)
class PrimalBounds:
    """Bounds valid for every CSVM solution with objective at most ``upper``."""

    upper: float
    radius: float
    w_lo: np.ndarray
    w_hi: np.ndarray
    b_lo: float
    b_hi: float
    xi_hi: np.ndarray
    anchor_lo: np.ndarray
    anchor_hi: np.ndarray


def _monotone_root(f, lo: float, hi: float, increasing: bool, budget: float) -> float:
    """Bisection for the boundary of ``{b : f(b) <= budget}``, returning the excluded side.

    For a decreasing f the set is ``[b*, inf)`` and the returned value is below
    b* (so ``b >= value`` is valid); for an increasing f it is above b*.
    """
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        inside = f(mid) <= budget
        if increasing:
            lo, hi = (mid, hi) if inside else (lo, mid)
        else:
            lo, hi = (lo, mid) if inside else (mid, hi)
    return hi if increasing else lo


def primal_bounds(
    upper: float,
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    C: float,
    weight: np.ndarray,
    reference: SVMReference | None,
) -> PrimalBounds:
    """The bounds of the module docstring."""
    U = upper * (1.0 + UPPER_SLACK) + 1e-9
    if reference is None:
        centre, radius = np.zeros(phi_train.shape[1]), np.sqrt(U)
    else:
        dual = reference.dual - UPPER_SLACK * abs(reference.dual) - 1e-9
        centre = reference.w
        radius = np.sqrt(max(U - dual, 0.0)) + np.sqrt(max(reference.primal - dual, 0.0))
    least_ww = max(0.0, np.linalg.norm(centre) - radius) ** 2

    def score_range(phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s, r = phi @ centre, radius * np.linalg.norm(phi, axis=1)
        return s - r, s + r

    b_lo, b_hi, xi_hi, anchor_lo, anchor_hi = _intercept_and_margins(
        score_range, U - least_ww, phi_train, y_train, phi_anchor, y_anchor, C, weight
    )
    return PrimalBounds(U, float(radius), centre - radius, centre + radius, b_lo, b_hi, xi_hi, anchor_lo, anchor_hi)


def _intercept_and_margins(score_range, budget: float, phi_train, y_train, phi_anchor, y_anchor, C, weight):
    """Fact 2 of the module docstring for any range of the scores ``w'phi`` over the admissible w.

    ``score_range(phi)`` gives, per row, the least and the largest ``w'phi``;
    ``budget`` bounds the weighted hinge sum ``C sum s_i hinge_i``. Returns
    ``(b_lo, b_hi, xi_hi, anchor_lo, anchor_hi)``.
    """
    lo_i, hi_i = score_range(phi_train)
    pos, neg = y_train > 0, y_train < 0
    cw = C * weight
    span = budget / cw.min() + 1.0
    c_pos = 1.0 - hi_i[pos]
    b_lo = _monotone_root(
        lambda b: cw[pos] @ np.maximum(0.0, c_pos - b), c_pos.min() - span, c_pos.max() + 1.0, False, budget
    )
    c_neg = -1.0 - lo_i[neg]
    b_hi = _monotone_root(
        lambda b: cw[neg] @ np.maximum(0.0, b - c_neg), c_neg.min() - 1.0, c_neg.max() + span, True, budget
    )
    worst_hinge = np.where(pos, np.maximum(0.0, 1.0 - lo_i - b_lo), np.maximum(0.0, 1.0 + hi_i + b_hi))
    xi_hi = np.minimum(budget / cw, worst_hinge)

    lo_j, hi_j = score_range(phi_anchor)
    anchor_lo = np.where(y_anchor > 0, lo_j + b_lo, -(hi_j + b_hi))
    anchor_hi = np.where(y_anchor > 0, hi_j + b_hi, -(lo_j + b_lo))
    return float(b_lo), float(b_hi), xi_hi, anchor_lo, anchor_hi


def l1_primal_bounds(
    upper: float,
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    C: float,
    weight: np.ndarray,
) -> PrimalBounds:
    r"""The bounds of the module docstring for the L1-norm CSVM.

    Its objective is :math:`G(w, b) = \|w\|_1 + C \sum s_i \mathrm{hinge}_i`;
    every solution with :math:`G \le U` has :math:`\|w\|_1 \le U`, hence
    :math:`|w^\top\phi| \le U \|\phi\|_\infty` (Hoelder) and
    :math:`|w_f| \le U`, and its weighted hinge sum is at most U; fact 2 then
    gives the intervals for b, the slacks and the anchor margins. ``radius``
    is U, the L1 ball's radius.
    """
    U = upper * (1.0 + UPPER_SLACK) + 1e-9

    def score_range(phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = U * np.abs(phi).max(axis=1, initial=0.0)
        return -r, r

    b_lo, b_hi, xi_hi, anchor_lo, anchor_hi = _intercept_and_margins(
        score_range, U, phi_train, y_train, phi_anchor, y_anchor, C, weight
    )
    p = phi_train.shape[1]
    return PrimalBounds(U, float(U), np.full(p, -U), np.full(p, U), b_lo, b_hi, xi_hi, anchor_lo, anchor_hi)
