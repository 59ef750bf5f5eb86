r"""Incumbent-based big-M tightening for the L1-norm CSVM: the least anchor margin over all good points, by LP.

The L1 CSVM (:func:`csvm_stats.optimization.problem.build_l1_primal`) writes
an anchor point's requirement as
:math:`y_j((w^+ - w^-)^\top\phi_j + b) \ge 1 - M_j(1 - z_j)`, with
:math:`M_j = 1 - \ell_j` from the closed-form bound
(:func:`csvm_stats.optimization.tightening.l1_primal_bounds`: Hoelder,
:math:`|w^\top\phi_j| \le U \|\phi_j\|_\infty`), which is loose by a factor
of about seven on a 300 x 500 Gaussian instance. Given an incumbent of
objective U, every solution at least as good lies in

.. math::

    P(U) = \{(w^\pm, b, \xi):\; y_i((w^+ - w^-)^\top\phi_i + b) + \xi_i \ge 1\ (i \in I),\;
    \textstyle\sum_f (w^+_f + w^-_f) + C \sum_i s_i \xi_i \le U,\; w^\pm, \xi \ge 0\},

the training rows and the objective cut (the anchor rows and counts left
out: a relaxation). So

.. math::

    \ell_j(U) = \min_{P(U)}\; y_j((w^+ - w^-)^\top\phi_j + b)

bounds the margin of point j in every solution with objective at most U, and
:math:`M_j = \max(0, 1 - \ell_j(U))` is a valid big-M constant for them (it
removes no solution that could improve the incumbent); :math:`\ell_j \ge 1`
proves :math:`z_j = 1` may be fixed. One LP per anchor point, on one HiGHS
model whose objective changes from point to point (the simplex re-starts
from the previous basis). ``U`` is inflated by UPPER_SLACK and the
LP value lowered by LP_SLACK against the LP's tolerances, so the constants
stay valid in floating point.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from csvm_stats.optimization.problem import CSVMData
from csvm_stats.optimization.solvers._common import INF
from csvm_stats.optimization.solvers.highs import _highs_version, _import_highs, quiet_model, set_colwise_matrix
from csvm_stats.optimization.tightening import UPPER_SLACK

LP_SLACK = 1e-6  # subtracted (relative to 1 + |value|) from an LP's least margin against its tolerances


class MarginLP:
    r"""The LP :math:`\min_{P(U)}` of a linear score over the L1 CSVM's good points (module docstring)."""

    def __init__(self, data: CSVMData, threads: int | None = None) -> None:
        highs = _import_highs()
        _highs_version()  # the first instance of the process is made quietly
        phi, y = data.phi_train, data.y_train
        n_i, p = phi.shape
        self.p, self.n_i = p, n_i
        self.data = data
        yphi = phi * y[:, None]
        train = sp.hstack([sp.csr_matrix(yphi), sp.csr_matrix(-yphi), sp.csr_matrix(y[:, None]), sp.identity(n_i)])
        cost = np.r_[np.ones(2 * p), 0.0, data.C * data.weight]
        A = sp.vstack([train, sp.csr_matrix(cost[None, :])]).tocsc()
        self.n_cols = A.shape[1]
        lp = highs.HighsLp()
        lp.num_col_, lp.num_row_ = self.n_cols, A.shape[0]
        lp.col_cost_ = np.zeros(self.n_cols)
        lp.col_lower_ = np.r_[np.zeros(2 * p), -INF, np.zeros(n_i)]
        lp.col_upper_ = np.full(self.n_cols, INF)
        lp.row_lower_ = np.r_[np.ones(n_i), -INF]
        lp.row_upper_ = np.r_[np.full(n_i, INF), INF]
        set_colwise_matrix(highs, lp, A)
        model = quiet_model(highs, lp, threads)
        model.setOptionValue("simplex_strategy", 1)  # dual simplex: measured faster than the primal here
        self.model, self.highs = model, highs
        self.columns = np.arange(self.n_cols, dtype=np.int32)
        self.solves = 0

    def least_margins(self, upper: float, anchors: np.ndarray, deadline=None) -> np.ndarray:
        r""":math:`\ell_j(U)` (a valid lower bound) for each index in ``anchors`` (``-inf`` where the LP did not
        solve, or after ``deadline()`` returned True; an LP without a point is read as no information, though the
        incumbent lies in P(U))."""
        d = self.data
        U = upper * (1.0 + UPPER_SLACK) + 1e-9
        self.model.changeRowBounds(self.n_i, -INF, float(U))
        status = self.highs.HighsModelStatus
        out = np.full(anchors.size, -math.inf)
        for k, j in enumerate(anchors):
            if deadline is not None and deadline():
                break
            score = d.y_anchor[j] * d.phi_anchor[j]
            cost = np.r_[score, -score, d.y_anchor[j], np.zeros(self.n_i)]
            self.model.changeColsCost(self.n_cols, self.columns, cost)
            self.model.run()
            self.solves += 1
            code = self.model.getModelStatus()
            if code == status.kOptimal:
                value = float(self.model.getInfo().objective_function_value)
                out[k] = value - LP_SLACK * (1.0 + abs(value))
        return out
