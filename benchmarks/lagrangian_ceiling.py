r"""Issue 27, ideas 1-2: can a Lagrangian (big-M) bound on the count lift bnb's bound on the accuracy instances?

For a node with forced set F and free anchor points R of which ``need`` must reach margin 1, every solution
no worse than the incumbent UB has margins :math:`m_j = y_j(w^\top x_j + b) \ge L_j` (optimality-based bound
tightening, OBBT: :math:`L_j = \min m_j` subject to objective <= UB), so each dropped point's hinge is at most
:math:`1 - L_j` and

.. math::

    \sum_{j \in R} \frac{(1 - m_j)_+}{1 - L_j} \le |R| - \text{need}.

Dualising it with :math:`\mu \ge 0` gives the weighted SVM bound
:math:`LB(\mu) = \min_{w,b} \text{obj} + \mu \sum_{j \in R} (1 - m_j)_+ / (1 - L_j) - \mu (|R| - \text{need})`;
its maximum over :math:`\mu` is the continuous relaxation of the big-M MIQP with these :math:`L_j`
(:math:`m_j \ge L_j + (1 - L_j) z_j`, :math:`\sum z \ge` count, :math:`0 \le z \le 1`), which this script solves
directly as one QP (HiGHS). With the exact OBBT :math:`L_j` (each by bisection on
:math:`g(t) = \min \{\text{obj} : m_j \le t\}`, 11 QPs) it is the ceiling of ideas 1 and 2 together: no choice of
valid :math:`L_j` from the incumbent does better. The script reports, at the root and at nodes forcing the k free
points below margin 1 that are cheapest to force (closest to margin 1 at the root), D(F), the ceiling bound and
the relaxed count :math:`\sum (1 - m_j)_+ / (1 - L_j)` at D(F)'s solution against the drops allowed.

Instances: the variant grid of ``solve_time.py`` (``--variant``, default accuracy >= 0.8: ``synthetic(n, p, seed,
shift)``, ``split(y, seed)``, the rate's count over its anchor points, C = 1, linear kernel; the anchor points
outside the requirement are left out, as they constrain nothing); UB: an incumbent bnb reaches (``--ub``, e.g.
from ``accuracy_peeling.md``). Run ``python benchmarks/lagrangian_ceiling.py --seed 27 --ub 149.76``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import highspy
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import solve_time as st

INF = highspy.kHighsInf


def qp(p: int, cost: np.ndarray, A: sp.spmatrix, lo: np.ndarray, hi: np.ndarray, xlo: np.ndarray,
       xhi: np.ndarray) -> tuple[float, np.ndarray, bool]:
    """HiGHS: min sum_{k < p} x_k^2 + cost'x subject to lo <= A x <= hi, xlo <= x <= xhi."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cost), A.shape[0]
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, xlo, xhi
    lp.row_lower_, lp.row_upper_ = lo, hi
    A = sp.csc_matrix(A)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    h.passModel(lp)
    hess = highspy.HighsHessian()
    hess.dim_, hess.format_ = len(cost), highspy.HessianFormat.kTriangular
    hess.start_ = np.r_[np.arange(p + 1), np.full(len(cost) - p, p)].astype(np.int32)
    hess.index_, hess.value_ = np.arange(p, dtype=np.int32), np.full(p, 2.0)
    h.passHessian(hess)
    h.run()
    ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value, np.array(h.getSolution().col_value), ok


class Instance:
    """The CSVM as QPs over x = [w, b, xi] (and z for the big-M relaxation)."""

    def __init__(self, n: int, seed: int, p: int, shift: float, kind: str, target: float) -> None:
        X, y = st.synthetic(n, p=p, seed=seed, shift=shift)
        I, J = st.split(y, seed)
        J = J[{"acc": np.ones(len(J), dtype=bool), "tpr": y[J] > 0, "tnr": y[J] < 0}[kind]]  # the members
        self.p, self.ni, self.nj = X.shape[1], len(I), len(J)
        self.Ai = y[I, None] * np.c_[X[I], np.ones(len(I))]  # rows: y_i (x_i, 1), margin = row @ (w, b)
        self.Aj = y[J, None] * np.c_[X[J], np.ones(len(J))]
        self.count = int(np.ceil(target * len(J)))
        self.cost = np.r_[np.zeros(self.p + 1), np.ones(self.ni)]  # C = 1, unit weights

    @classmethod
    def variant(cls, name: str, n: int, seed: int) -> Instance:
        """The instance of ``solve_time.VARIANTS`` row ``name`` at n rows and ``seed``."""
        _, p, shift, kind, target = next(v for v in st.VARIANTS if v[0] == name)
        return cls(n, seed, p, shift, kind, target)

    def root(self) -> tuple[float, np.ndarray]:
        """D(F0) (no anchor forced) and the anchor margins of its solution."""
        value, v = self.svm(np.zeros(self.nj, dtype=bool))
        return value, self.Aj @ v

    def _rows(self, forced: np.ndarray, extra: int = 0) -> tuple[sp.spmatrix, np.ndarray]:
        rows = [sp.hstack([sp.csr_matrix(self.Ai), sp.eye(self.ni), sp.csr_matrix((self.ni, extra))])]
        if forced.any():
            rows.append(sp.hstack([sp.csr_matrix(self.Aj[forced]), sp.csr_matrix((forced.sum(), self.ni + extra))]))
        return sp.vstack(rows).tocsr(), np.ones(self.ni + int(forced.sum()))

    def svm(self, forced: np.ndarray, cap: tuple[int, float] | None = None) -> tuple[float, np.ndarray]:
        """D(F) (``cap`` = (j, t): with m_j <= t as well); ``inf`` when infeasible."""
        A, lo = self._rows(forced)
        hi = np.full(lo.size, INF)
        if cap is not None:
            j, t = cap
            A = sp.vstack([A, sp.hstack([sp.csr_matrix(self.Aj[j:j + 1]), sp.csr_matrix((1, self.ni))])])
            lo, hi = np.r_[lo, -INF], np.r_[hi, t]
        n = self.p + 1 + self.ni
        value, x, ok = qp(self.p, self.cost, A, lo, hi, np.r_[np.full(self.p + 1, -INF), np.zeros(self.ni)],
                          np.full(n, INF))
        return (value if ok else np.inf), x[: self.p + 1]

    def obbt(self, forced: np.ndarray, ub: float, margins: np.ndarray) -> np.ndarray:
        """L_j = min m_j over solutions forcing ``forced`` with objective <= ub (bisection; -inf below -8)."""
        L = np.full(self.nj, 1.0)
        for j in np.flatnonzero(~forced):
            lo, hi = -8.0, min(margins[j], 1.0)
            if self.svm(forced, (j, lo))[0] <= ub:
                L[j] = -np.inf
                continue
            for _ in range(10):
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if self.svm(forced, (j, mid))[0] <= ub else (mid, hi)
            L[j] = lo
        return L

    def big_m(self, forced: np.ndarray, dropped: np.ndarray, L: np.ndarray) -> float:
        """The continuous relaxation of the big-M MIQP with margins m_j >= L_j + (1 - L_j) z_j (max over mu of
        LB(mu))."""
        free = np.flatnonzero(~forced & ~dropped)
        Lf = np.minimum(np.where(np.isfinite(L), L, -8.0), 1.0)[free]
        A, lo = self._rows(forced, self.nj)
        link = sp.hstack([sp.csr_matrix(self.Aj[free]), sp.csr_matrix((free.size, self.ni)),
                          -sp.csr_matrix((1.0 - Lf, (np.arange(free.size), free)), shape=(free.size, self.nj))])
        total = sp.hstack([sp.csr_matrix((1, self.p + 1 + self.ni)), sp.csr_matrix(np.ones((1, self.nj)))])
        A = sp.vstack([A, link, total])
        lo = np.r_[lo, Lf, self.count]
        n = self.p + 1 + self.ni
        value, _, ok = qp(self.p, np.r_[self.cost, np.zeros(self.nj)], A, lo, np.full(lo.size, INF),
                          np.r_[np.full(self.p + 1, -INF), np.zeros(self.ni), forced.astype(float)],
                          np.r_[np.full(n, INF), (~dropped).astype(float)])
        return value if ok else np.inf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--ub", type=float, required=True, help="an incumbent's objective (bnb's)")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--variant", default="accuracy >= 0.8", choices=[v[0] for v in st.VARIANTS])
    parser.add_argument("--forced", type=int, nargs="*", default=[0, 10, 20, 40],
                        help="nodes forcing the k free points below margin 1 closest to it at the root")
    parser.add_argument("--dropped", type=int, nargs="*", default=[],
                        help="nodes dropping the k points of least root margin (the search's dives drop these)")
    parser.add_argument("--bounds", type=Path, default=None, help="a .npy file of the L_j (read if there, else written)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    inst = Instance.variant(args.variant, args.n, args.seed)
    none = np.zeros(inst.nj, dtype=bool)
    root, margins = inst.root()
    cpu = time.process_time()
    obbt_cpu = None  # None: the L_j were read from ``--bounds``
    if args.bounds is not None and args.bounds.exists():
        L = np.load(args.bounds)
    else:
        L = inst.obbt(none, args.ub, margins)
        obbt_cpu = time.process_time() - cpu
        if args.bounds is not None:
            np.save(args.bounds, L)
    below = np.flatnonzero(margins < 1.0 - 1e-6)
    cheapest = below[np.argsort(-margins[below])]
    worst = np.argsort(margins)
    nodes = [(k, 0) for k in args.forced] + [(0, k) for k in args.dropped]
    for n_forced, n_dropped in nodes:
        forced, dropped = none.copy(), none.copy()
        forced[cheapest[:n_forced]] = True
        dropped[worst[:n_dropped]] = True
        value, v = inst.svm(forced)
        m = inst.Aj @ v
        free = ~forced & ~dropped
        relaxed = float((np.maximum(0.0, 1.0 - m[free]) / (1.0 - np.minimum(L[free], 1.0 - 1e-3))).sum())
        row = dict(variant=args.variant, seed=args.seed, n=args.n, ub=args.ub, forced=n_forced, dropped=n_dropped,
                   D=value, ceiling=inst.big_m(forced, dropped, L), relaxed_count=relaxed,
                   drops_allowed=int(free.sum()) - (inst.count - n_forced), below_1=int((m[free] < 1.0 - 1e-6).sum()),
                   obbt_cpu_s=obbt_cpu, root=root,
                   L_quantiles=[float(q) for q in np.quantile(L[np.isfinite(L)], [0.05, 0.5, 0.95])],
                   load=os.getloadavg()[0])
        st.emit(row, args.out)

if __name__ == "__main__":
    main()
