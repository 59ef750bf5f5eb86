r"""The multiclass CSVM as one more problem form of the solver layer.

Classes :math:`1..K`, scores :math:`f_k(x) = w_k^\top\phi(x) + b_k`, rule
:math:`\hat y(x) = \arg\max_k f_k(x)`. The Crammer-Singer max-margin model
with per-class recall requirements on the anchor sample:

.. math::

    \min\; \sum_k \|w_k\|^2 + C \sum_{i \in I} s_i \xi_i \quad\text{s.t.}\quad
    f_{y_i}(x_i) - f_k(x_i) \ge 1 - \xi_i,\ \xi_i \ge 0 \quad (i \in I,\ k \ne y_i);

    f_{y_j}(x_j) - f_k(x_j) \ge 1 - M_{jk}(1 - z_j) \quad (j \in J_c,\ k \ne y_j);\qquad
    \sum_{j \in J_c} z_j \ge k_c \quad (c \text{ constrained});\qquad \sum_k b_k = 0.

:math:`z_j = 1` says that anchor point j is classified correctly with margin
1 by the argmax rule, so the count rows constrain the rule actually used.
Only differences :math:`b_a - b_c` matter, hence the normalisation
:math:`\sum_k b_k = 0`. With two classes the model is the binary CSVM with
:math:`w = w_2 - w_1` and cost 2C (the optimum has :math:`w_1 = -w_2`).
It is an :class:`~csvm_stats.optimization.problem.MIQP` (diagonal Q on the w block), so
every backend of :mod:`csvm_stats.optimization.solvers` takes it unchanged.

Valid tightening (as :mod:`csvm_stats.optimization.tightening` for two classes). Let U be
the objective of a feasible point (the warm start). Every solution at least
as good has :math:`\sum_k\|w_k\|^2 \le U`, so
:math:`\|w_a - w_c\| \le \rho = \sqrt{2U}` and
:math:`|(w_a - w_c)^\top\phi| \le \rho\|\phi\|`. For the offset difference
:math:`d = b_a - b_c` the training points of class a have
:math:`\xi_i \ge (1 - \rho\|\phi_i\| - d)_+`, and
:math:`C\sum_{i \in I_a} s_i (1 - \rho\|\phi_i\| - d)_+ \le U` gives
:math:`d \ge \ell_{ac}` (bisection); class c's points give
:math:`d \le -\ell_{ca}`. The anchor margin of j over k then lies in
:math:`[-\rho\|\phi_j\| + \ell_{y_j k},\ \rho\|\phi_j\| - \ell_{k y_j}]`, so
:math:`M_{jk} = 1 - (-\rho\|\phi_j\| + \ell_{y_j k})` is a proven constant,
:math:`z_j = 0` is fixed when some upper end is below 1 and :math:`z_j = 1`
when every lower end is at least 1. None of this removes a solution with
objective at most U. Without U (no feasible start) indicator constraints
replace the big-M rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from csvm_stats.optimization.problem import MIQP, Indicators, MulticlassData
from csvm_stats.optimization.tightening import UPPER_SLACK, _monotone_root


@dataclass(frozen=True)
class MulticlassProblem:
    """The MIQP, the anchor rows it constrains and the big-M constant of each (j, k) row.

    ``exact`` is True when the model is the multiclass CSVM itself: ``big_m=None``,
    or a user's M at least every proven constant.
    """

    miqp: MIQP
    n_classes: int
    n_features: int
    anchor_index: np.ndarray
    big_m: np.ndarray
    exact: bool
    scale: float = 1.0

    def read(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(W (K, r), b (K,), z)`` from a solution vector (z on :attr:`anchor_index`)."""
        blocks = self.miqp.blocks
        W = x[blocks["w"]].reshape(self.n_classes, self.n_features) / self.scale
        return W, x[blocks["b"]].copy(), x[blocks["z"]].copy()


def constrained_anchor(y_anchor: np.ndarray, min_counts: Mapping[int, int]) -> np.ndarray:
    """Positions of the anchor points whose class carries a requirement."""
    return np.flatnonzero(np.isin(y_anchor, list(min_counts)))


def _difference_rows(phi: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Rows of ``f_{y_m}(x_m) - f_k(x_m)`` over the ``[W, b]`` block, for every point m and k != y_m.

    Returns the matrix and, per row, the point and the competing class.
    """
    n, r = phi.shape
    point = np.repeat(np.arange(n), n_classes - 1)
    rival = np.array([k for m in range(n) for k in range(n_classes) if k != y[m]], dtype=int)
    own = y[point]
    width = n_classes * r + n_classes
    rows = np.arange(point.size)
    cols = np.r_[(own[:, None] * r + np.arange(r)).ravel(), (rival[:, None] * r + np.arange(r)).ravel()]
    vals = np.r_[phi[point].ravel(), -phi[point].ravel()]
    row_idx = np.r_[np.repeat(rows, r), np.repeat(rows, r)]
    A = sp.csr_matrix((vals, (row_idx, cols)), shape=(point.size, width))
    offsets = sp.csr_matrix(
        (np.r_[np.ones(point.size), -np.ones(point.size)], (np.r_[rows, rows], n_classes * r + np.r_[own, rival])),
        shape=(point.size, width),
    )
    return (A + offsets).tocsr(), point, rival


@dataclass(frozen=True)
class DifferenceBounds:
    """Bounds valid for every solution with objective at most ``upper``.

    ``radius`` bounds :math:`\\|w_a - w_c\\|`; ``offset_lo[a, c]`` bounds
    :math:`b_a - b_c` from below (and ``-offset_lo[c, a]`` from above).
    """

    upper: float
    radius: float
    offset_lo: np.ndarray

    def margin_range(self, phi: np.ndarray, own: np.ndarray, rival: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Range of ``f_own(x) - f_rival(x)`` for rows ``phi`` (one row per pair)."""
        spread = self.radius * np.linalg.norm(phi, axis=1)
        return -spread + self.offset_lo[own, rival], spread - self.offset_lo[rival, own]


def difference_bounds(
    upper: float, phi_train: np.ndarray, y_train: np.ndarray, n_classes: int, C: float, weight: np.ndarray
) -> DifferenceBounds:
    """The bounds of the module docstring from the objective ``upper`` of a feasible point."""
    U = upper * (1.0 + UPPER_SLACK) + 1e-9
    radius = float(np.sqrt(2.0 * U))
    reach = radius * np.linalg.norm(phi_train, axis=1)
    cw = C * weight
    offset_lo = np.full((n_classes, n_classes), -np.inf)
    np.fill_diagonal(offset_lo, 0.0)
    for a in range(n_classes):
        members = y_train == a
        if not members.any():
            continue
        c_a, w_a = 1.0 - reach[members], cw[members]
        span = U / w_a.min() + 1.0
        lo = _monotone_root(lambda d: w_a @ np.maximum(0.0, c_a - d), c_a.min() - span, c_a.max() + 1.0, False, U)
        offset_lo[a, np.arange(n_classes) != a] = lo
    return DifferenceBounds(U, radius, offset_lo)


def multiclass_scale(n_classes: int, n_features: int, upper: float | None) -> float:
    """The factor s of the w block: ``sqrt(K r / U)`` (1 without a finite positive U)."""
    if upper is None or not np.isfinite(upper) or upper <= 0:
        return 1.0
    return float(np.sqrt(n_classes * n_features / upper))


def build_multiclass_primal(
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    n_classes: int,
    *,
    C: float,
    min_counts: Mapping[int, int],
    big_m: float | None,
    sample_weight: np.ndarray,
    start: np.ndarray | None = None,
    upper: float | None = None,
) -> MulticlassProblem:
    r"""The multiclass CSVM of the module docstring; variables ``[W (class-major), b, xi, z]``.

    Labels are class positions ``0..K-1``; ``min_counts`` maps a class to its
    required anchor count. ``upper`` (the objective of ``start``) enables the
    proven big-M constants; ``big_m`` caps them (``None``: proven constants
    only, indicator constraints where none is known). Scaling: the w block
    holds :math:`sW` with :math:`s` from :func:`multiclass_scale`, so that its
    entries are of order 1 and the solvers' absolute tolerances (e.g. on the
    epigraphs :math:`t \ge w^2`) stay small against the objective; ``start``
    is given in these variables and :meth:`MulticlassProblem.read` undoes it.
    """
    n_i, r = phi_train.shape
    K = int(n_classes)
    s = multiclass_scale(K, r, upper)
    phi_train, phi_anchor = phi_train / s, phi_anchor / s  # the w block holds s * W
    y_i, y_j = y_train.astype(int), y_anchor.astype(int)
    anchor_index = constrained_anchor(y_j, min_counts)
    n_z = anchor_index.size
    nw = K * r
    blocks = {
        "w": slice(0, nw),
        "b": slice(nw, nw + K),
        "xi": slice(nw + K, nw + K + n_i),
        "z": slice(nw + K + n_i, nw + K + n_i + n_z),
    }
    n = nw + K + n_i + n_z
    Q = sp.diags(np.r_[np.full(nw, 1.0 / s**2), np.zeros(n - nw)]).tocsr()
    c = np.zeros(n)
    c[blocks["xi"]] = C * sample_weight
    lb = np.r_[np.full(nw + K, -np.inf), np.zeros(n_i + n_z)]
    ub = np.r_[np.full(nw + K + n_i, np.inf), np.ones(n_z)]

    train_core, train_point, _ = _difference_rows(phi_train, y_i, K)
    slack = sp.csr_matrix((np.ones(train_point.size), (np.arange(train_point.size), train_point)), shape=(train_point.size, n_i))
    train_rows = sp.hstack([train_core, slack, sp.csr_matrix((train_point.size, n_z))]).tocsr()

    phi_c, y_c = phi_anchor[anchor_index], y_j[anchor_index]
    anchor_core, anchor_point, anchor_rival = _difference_rows(phi_c, y_c, K)
    n_pairs = anchor_point.size
    proven = np.full(n_pairs, np.inf)
    if upper is not None and np.isfinite(upper):
        bounds = difference_bounds(upper, s * phi_train, y_i, K, C, sample_weight)
        lo, hi = bounds.margin_range(s * phi_c[anchor_point], y_c[anchor_point], anchor_rival)
        proven = np.maximum(1.0 - lo, 0.0)
        z_var = blocks["z"].start + np.arange(n_z)
        never = np.zeros(n_z, dtype=bool)
        np.logical_or.at(never, anchor_point, hi < 1.0)
        always = np.ones(n_z, dtype=bool)
        np.logical_and.at(always, anchor_point, lo >= 1.0)
        ub[z_var[never]] = 0.0
        lb[z_var[always & ~never]] = 1.0
        b_lo = bounds.offset_lo.mean(axis=1)  # b_a = mean_c (b_a - b_c) under sum_k b_k = 0
        b_hi = -bounds.offset_lo.mean(axis=0)
        lb[blocks["b"]], ub[blocks["b"]] = b_lo, b_hi
        w_cap = s * np.sqrt(bounds.upper)
        lb[blocks["w"]], ub[blocks["w"]] = -w_cap, w_cap
        ub[blocks["xi"]] = bounds.upper / (C * sample_weight)
    m = proven if big_m is None else np.minimum(float(big_m), proven)
    exact = big_m is None or bool(np.all(float(big_m) >= proven))
    use_big_m = np.isfinite(m)
    anchor_full = sp.hstack([anchor_core, sp.csr_matrix((n_pairs, n_i))]).tocsr()
    z_of_row = sp.csr_matrix((-np.where(use_big_m, m, 0.0), (np.arange(n_pairs), anchor_point)), shape=(n_pairs, n_z))
    big_m_rows = sp.hstack([anchor_full, z_of_row]).tocsr()[use_big_m]

    classes = sorted(min_counts)
    count_rows = sp.csr_matrix(
        (np.ones(n_z), ([classes.index(k) for k in y_c], blocks["z"].start + np.arange(n_z))), shape=(len(classes), n)
    )
    gauge = sp.csr_matrix((np.ones(K), (np.zeros(K, dtype=int), nw + np.arange(K))), shape=(1, n))
    A = sp.vstack([train_rows, big_m_rows, count_rows, gauge]).tocsr()
    row_lo = np.r_[np.ones(train_point.size), 1.0 - m[use_big_m], [min_counts[k] for k in classes], 0.0]
    row_hi = np.r_[np.full(A.shape[0] - 1, np.inf), 0.0]

    indicators = None
    if not use_big_m.all():
        free = np.flatnonzero(~use_big_m)
        ind_A = sp.hstack([anchor_full[free], sp.csr_matrix((free.size, n_z))]).tocsr()
        indicators = Indicators(blocks["z"].start + anchor_point[free], ind_A, np.ones(free.size))
    miqp = MIQP(
        Q=Q, c=c, A=A, row_lo=row_lo, row_hi=row_hi, lb=lb, ub=ub,
        binary=np.arange(blocks["z"].start, n), blocks=blocks, indicators=indicators, start=start,
        tangent_points=() if start is None else (start,),
        multiclass=MulticlassData(s * phi_train, y_i, s * phi_c, y_c, K, float(C), sample_weight, dict(min_counts), s)
        if exact else None,
    )
    return MulticlassProblem(miqp, K, r, anchor_index, m, exact, s)
