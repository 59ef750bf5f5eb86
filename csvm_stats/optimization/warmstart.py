r"""The paper's warm start (Section 3.1): a plain SVM with a shifted intercept.

1. Fit the ordinary SVM (objective :math:`w^\top w + C\sum s_i\xi_i`, i.e.
   scikit-learn's ``SVC`` with ``C/2``) on :math:`I \cup J` in feature space.
2. Keep the direction w and move b until every rate requirement holds: each
   requirement "at least k of the anchor points in a set have
   :math:`y_j(w^\top\phi_j + b) \ge 1`" is a step function of b, so the
   feasible intercepts are found by scanning the breakpoints
   :math:`b = y_j - w^\top\phi_j` and, among them, the one with the smallest
   CSVM objective is kept. If no intercept works (requirements on both
   classes), w is scaled up by a few factors, which widens every correctly
   signed margin, and the scan repeated.
3. :math:`z_j = 1` exactly where the margin constraint holds; the slack is
   :math:`\xi_i = \max(0, 1 - y_i(w^\top\phi_i + b))`.
4. Polishing (beyond the paper): with the anchor points of step 3 fixed, the
   CSVM is an SVM on I in which those anchor points must meet their margin.
   An SVM on I plus those points with a large weight approximates it; its
   direction goes through steps 2 and 3 again, and the best point found is
   kept. This usually halves the gap between the start and the optimum, which
   tightens every bound derived from it.

The result is a feasible point of the CSVM and its objective an upper bound
on the optimum, which :mod:`csvm_stats.optimization.problem` uses to tighten the model.

*Anytime.* Every SVM fit runs SMO in chunks of :func:`smo_chunk` steps (each a
fraction of a second of CPU) and reads the caller's
:class:`~csvm_stats.optimization.budget.Deadline` between chunks: at the
deadline it stops with its current dual point, whose direction still goes
through steps 2 and 3 (any direction gives a feasible point when an
intercept and scale meet the requirements) and whose dual value is still a
lower bound (weak duality). Polishing rounds stop at the deadline too. The
chunks also let Ctrl-C through: the compiled SMO returns to Python after each.
Every step is linear or n log n in the number of rows (the accuracy
requirement's breakpoint scan included: :func:`_sorted_hinge_sums`,
:func:`_sorted_counts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from csvm_stats.optimization.budget import NO_DEADLINE, Deadline
from csvm_stats.optimization.problem import RateRequirement
from csvm_stats.optimization.svm_dual import CHUNK, SVMDual
from csvm_stats.optimization.tightening import SVMReference

SCALE_FACTORS: tuple[float, ...] = (1.0, 1.5, 2.0, 4.0, 8.0, 16.0)
MARGIN_TOL = 1e-9
POLISH_ROUNDS = 3
MAX_SVM_STEPS = 2_000_000  # SMO pair steps of one warm-start SVM fit
ANCHOR_WEIGHT = 100.0  # weight of a kept anchor point relative to C in the polishing SVM
GRAM_COLUMNS_RATIO = 0.25  # feature columns per row above which SVM fits (and bnb) use an n x n Gram matrix
# Work (kernel-row entries read) of one compiled SMO call beyond SMALL_STEP: a step reads every working row once
# (Gram mode) or every row's d features (feature mode) twice, about 2 ns per entry here, so 5e7 is at most about
# 0.1 CPU-s (less once SMO shrinks its working set): a deadline or a Ctrl-C is seen within that (measured at
# n = 100,000, p = 20: at most 0.22 CPU-s between two clock reads of the search with 1e8). Steps of at
# most SMALL_STEP entries (2000 stacked rows at d = 10: bnb's benchmark sizes up to n = 2000) keep the full CHUNK.
CHUNK_WORK = 5e7
SMALL_STEP = 20_000
MIN_CHUNK = 64
FAST_SCAN_WORK = 1_000_000  # candidates x rows beyond which the accuracy scan sorts instead of comparing all pairs


@dataclass(frozen=True)
class WarmStart:
    """A feasible CSVM point: direction, intercept, anchor indicators and objective."""

    w: np.ndarray
    b: float
    z: np.ndarray
    xi: np.ndarray
    objective: float


def smo_chunk(dual: SVMDual) -> int:
    """SMO steps of one compiled call on ``dual``: CHUNK for small steps, else about CHUNK_WORK work (at least
    MIN_CHUNK steps). A step costs about the number of rows (Gram mode) or rows times features (feature mode).
    """
    rows = dual.y.shape[0]
    per_step = rows if dual.gram is not None else rows * max(1, dual.phi.shape[1])
    if per_step <= SMALL_STEP:
        return CHUNK
    return int(min(CHUNK, max(MIN_CHUNK, CHUNK_WORK // per_step)))


def fit_svm(
    gram: np.ndarray | None, phi: np.ndarray, y: np.ndarray, C: float, weight: np.ndarray, tol: float = 1e-6,
    deadline: Deadline = NO_DEADLINE,
) -> tuple[np.ndarray, float, float]:
    """The SVM ``min w'w + C sum s_i xi_i``: direction, intercept, dual value (SMO, :mod:`~csvm_stats.optimization.svm_dual`).

    ``gram`` is ``phi @ phi.T`` (sliced by the caller from one Gram matrix) or
    ``None``: then the solver works on the rows of ``phi`` (memory linear in
    the number of rows). The dual value is on the CSVM scale, ``2 g(alpha)``, a
    lower bound on the optimum by weak duality at any stopping point. SMO runs
    until its KKT gap is below ``tol`` or MAX_SVM_STEPS pair steps have passed
    (degenerate data, e.g. many duplicated rows, can make libsvm crawl for
    minutes; the point returned is then still a valid SVM, only less exact).
    SMO runs in chunks of :func:`smo_chunk` steps and stops early at ``deadline``
    (module docstring: the point and the bound stay valid).
    """
    dual = SVMDual(phi, y, C * weight / 2.0, gram, tol)
    active, chunk = np.arange(y.shape[0]), smo_chunk(dual)
    alpha, steps = None, 0
    while True:
        solution = dual.solve(active, alpha, min(chunk, MAX_SVM_STEPS - steps))
        alpha, steps = solution.alpha, steps + solution.steps
        if solution.converged or steps >= MAX_SVM_STEPS or deadline.expired():
            return solution.w, solution.b, solution.bound


def svm_reference(
    phi_train: np.ndarray, y_train: np.ndarray, C: float, weight: np.ndarray, gram: np.ndarray | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> SVMReference:
    """The plain SVM on I with its primal value and a dual lower bound (for :mod:`csvm_stats.optimization.tightening`).

    ``gram`` may be any Gram matrix whose leading block is ``phi_train @ phi_train.T``. Stopped at
    ``deadline``, the point is less exact and the bound weaker, both still valid.
    """
    n = phi_train.shape[0]
    gram_train = gram_matrix(phi_train) if gram is None else gram[:n, :n]
    w, b, dual = fit_svm(gram_train, phi_train, y_train, C, weight, deadline=deadline)
    primal = float(w @ w + C * weight @ np.maximum(0.0, 1.0 - y_train * (phi_train @ w + b)))
    return SVMReference(w, b, primal, dual)


def _sorted_hinge_sums(scores_train: np.ndarray, y_train: np.ndarray, cw: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""``sum_i cw_i max(0, 1 - y_i(s_i + b))`` for every b, in O((n + m) log n).

    A positive row contributes :math:`cw_i (t_i - b)` where :math:`t_i = 1 - s_i > b`,
    a negative one :math:`cw_i (b - u_i)` where :math:`u_i = -1 - s_i < b`: sorted
    breakpoints and cumulative sums of :math:`cw` and :math:`cw\,t` give each sum.
    """
    pos = y_train > 0
    t, cp = 1.0 - scores_train[pos], cw[pos]
    u, cn = -1.0 - scores_train[~pos], cw[~pos]
    ot, ou = np.argsort(t), np.argsort(u)
    t, cp, u, cn = t[ot], cp[ot], u[ou], cn[ou]
    suffix_w = np.r_[np.cumsum(cp[::-1])[::-1], 0.0]
    suffix_wt = np.r_[np.cumsum((cp * t)[::-1])[::-1], 0.0]
    prefix_w = np.r_[0.0, np.cumsum(cn)]
    prefix_wu = np.r_[0.0, np.cumsum(cn * u)]
    k = np.searchsorted(t, b, side="right")  # positives with t > b
    m = np.searchsorted(u, b, side="left")  # negatives with u < b
    return (suffix_wt[k] - b * suffix_w[k]) + (b * prefix_w[m] - prefix_wu[m])


def _objective_for_intercepts(
    scores_train: np.ndarray, y_train: np.ndarray, C: float, weight: np.ndarray, ww: float, b: np.ndarray
) -> np.ndarray:
    """CSVM objective ``w'w + C sum s_i max(0, 1 - y_i(s_i + b))`` for each candidate b.

    Many candidates on many rows go through :func:`_sorted_hinge_sums` (the same
    values up to rounding); few are summed directly.
    """
    if b.shape[0] * scores_train.shape[0] > FAST_SCAN_WORK:
        return ww + _sorted_hinge_sums(scores_train, y_train, C * weight, b)
    out = np.empty(b.shape[0])
    for start in range(0, b.shape[0], 512):
        bb = b[start : start + 512]
        hinge = np.maximum(0.0, 1.0 - y_train[None, :] * (scores_train[None, :] + bb[:, None]))
        out[start : start + 512] = ww + C * hinge @ weight
    return out


def _feasible_intercepts(
    scores_anchor: np.ndarray, y_anchor: np.ndarray, requirements: Sequence[RateRequirement], candidates: np.ndarray
) -> np.ndarray:
    """Boolean mask of candidate intercepts meeting every requirement.

    Many candidates on many members are counted by :func:`_sorted_counts`;
    the caller checks the point it keeps with the margins themselves.
    """
    ok = np.ones(candidates.shape[0], dtype=bool)
    for req in requirements:
        ys, ss = y_anchor[req.members], scores_anchor[req.members]
        if candidates.shape[0] * ys.shape[0] > FAST_SCAN_WORK:
            ok &= _sorted_counts(ss, ys, candidates) >= req.count
            continue
        # count of members with y (s + b) >= 1 for each candidate b
        met = (ys[None, :] * (ss[None, :] + candidates[:, None]) >= 1.0 - MARGIN_TOL).sum(axis=1)
        ok &= met >= req.count
    return ok


def _sorted_counts(scores: np.ndarray, y: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """For each candidate b, how many rows have ``y (s + b) >= 1 - MARGIN_TOL``, in O((n + m) log n).

    A positive row counts for ``b >= 1 - MARGIN_TOL - s``, a negative one for ``b <= -1 + MARGIN_TOL - s``.
    """
    pos = y > 0
    lower = np.sort(1.0 - MARGIN_TOL - scores[pos])
    upper = np.sort(-1.0 + MARGIN_TOL - scores[~pos])
    return (np.searchsorted(lower, candidates, side="right")
            + upper.shape[0] - np.searchsorted(upper, candidates, side="left"))


def _meets(scores_anchor: np.ndarray, y_anchor: np.ndarray, requirements: Sequence[RateRequirement], b: float) -> bool:
    """Whether intercept b meets every requirement, read from the margins themselves."""
    met = y_anchor * (scores_anchor + b) >= 1.0 - MARGIN_TOL
    return all(int(met[req.members].sum()) >= req.count for req in requirements)


def _interval_intercept(
    s_train: np.ndarray, y_train: np.ndarray, cw: np.ndarray, s_anchor: np.ndarray,
    requirements: Sequence[RateRequirement],
) -> float | None:
    """The best intercept when every requirement is a TPR or TNR count (``None``: none is feasible).

    A TPR requirement "k positives with s_j + b >= 1" holds exactly for
    ``b >= 1 - (k-th largest s_j)``, a TNR one for ``b <= -1 - (k-th smallest
    s_j)``; the hinge sum is convex and piecewise linear in b with slope
    ``-W_+ + sum(cw_i : t_i < b)`` at breakpoints ``t_i = y_i - s_i``, so its
    minimiser is a weighted median, clipped to the feasible interval.
    """
    lo, hi = -np.inf, np.inf
    for req in requirements:
        if req.count == 0:
            continue
        s = np.sort(s_anchor[req.members])
        if req.kind == "tpr":
            lo = max(lo, 1.0 - s[-req.count])
        else:
            hi = min(hi, -1.0 - s[req.count - 1])
    if lo > hi:
        return None
    t = y_train - s_train
    order = np.argsort(t)
    k = int(np.searchsorted(np.cumsum(cw[order]), cw[y_train > 0].sum()))
    return float(min(max(t[order[min(k, t.size - 1)]], lo), hi))


def best_shift(
    w0: np.ndarray,
    b0: float,
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    C: float,
    weight: np.ndarray,
    requirements: Sequence[RateRequirement],
    factors: Sequence[float] = SCALE_FACTORS,
) -> WarmStart | None:
    """Steps 2 and 3: the best scaled and shifted version of direction ``w0``.

    TPR / TNR requirements take the exact O(n log n) route of
    :func:`_interval_intercept`; an accuracy requirement scans the breakpoints.
    """
    best: WarmStart | None = None
    interval = all(req.kind in ("tpr", "tnr") for req in requirements)
    scores_train, scores_anchor = phi_train @ w0, phi_anchor @ w0  # scores are linear in w: once for every factor
    for factor in factors:
        w = factor * w0
        s_train, s_anchor = factor * scores_train, factor * scores_anchor
        if interval:
            b = _interval_intercept(s_train, y_train, C * weight, s_anchor, requirements)
            if b is None:
                continue
            cand = np.array([b])
        else:
            candidates = np.unique(np.r_[factor * b0, y_anchor - s_anchor, y_train - s_train])
            cand = candidates[_feasible_intercepts(s_anchor, y_anchor, requirements, candidates)]
            if cand.size == 0:
                continue
        obj = _objective_for_intercepts(s_train, y_train, C, weight, float(w @ w), cand)
        k = int(np.argmin(obj))
        if not interval:  # a sorted count may differ from the margins by rounding at a breakpoint: check the one kept
            order = np.argsort(obj, kind="stable")
            checked = next((q for q in order if _meets(s_anchor, y_anchor, requirements, float(cand[q]))), None)
            if checked is None:
                continue
            k = int(checked)
        if best is None or obj[k] < best.objective:
            b = float(cand[k])
            z = (y_anchor * (s_anchor + b) >= 1.0 - MARGIN_TOL).astype(float)
            xi = np.maximum(0.0, 1.0 - y_train * (s_train + b))
            value = _objective_for_intercepts(s_train, y_train, C, weight, float(w @ w), np.array([b]))[0]
            best = WarmStart(w, b, z, xi, float(value))  # summed directly (the sorted sums round differently)
        if not requirements:  # scaling only helps to meet requirements
            break
    return best


def gram_matrix(phi: np.ndarray) -> np.ndarray | None:
    """``phi @ phi.T`` when the feature rows are wide (kernels at exact rank), else ``None``.

    With few columns (``p <= GRAM_COLUMNS_RATIO * n``, e.g. the linear kernel)
    libsvm's linear kernel works on the rows directly: no n x n matrix, memory
    linear in n.
    """
    return phi @ phi.T if phi.shape[1] > GRAM_COLUMNS_RATIO * phi.shape[0] else None


def shifted_intercept_start(
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    *,
    C: float,
    weight: np.ndarray,
    requirements: Sequence[RateRequirement],
    gram: np.ndarray | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> WarmStart | None:
    """The paper's warm start, polished; ``None`` when no scaled, shifted SVM meets the requirements.

    ``gram`` is the Gram matrix of the stacked rows ``[phi_train; phi_anchor]``
    (:func:`gram_matrix` when not given: ``None`` for narrow rows); every SVM fit slices it.
    At ``deadline`` the SVM fit running stops and no further polishing round starts: the
    best point so far is returned (anytime).
    """
    args = (phi_train, y_train, phi_anchor, y_anchor, C, weight, requirements)
    phi = np.vstack([phi_train, phi_anchor])
    gram = gram_matrix(phi) if gram is None else gram
    y = np.r_[y_train, y_anchor]
    w0, b0, _ = fit_svm(gram, phi, y, C, np.r_[weight, np.ones(y_anchor.shape[0])], deadline=deadline)
    best = best_shift(w0, b0, *args)
    if best is None or not requirements:
        return best
    n_i = phi_train.shape[0]
    for _ in range(POLISH_ROUNDS):
        if deadline.expired():
            break
        rows = np.r_[np.arange(n_i), n_i + np.flatnonzero(best.z > 0.5)]
        w_k = np.r_[weight, np.full(rows.size - n_i, ANCHOR_WEIGHT)]
        w1, b1, _ = fit_svm(None if gram is None else gram[np.ix_(rows, rows)], phi[rows], y[rows], C, w_k,
                            deadline=deadline)
        candidate = best_shift(w1, b1, *args)
        if candidate is None or candidate.objective >= best.objective * (1 - 1e-6):
            break
        best = candidate
    return best
