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
Every step is linear or n log n in the number of rows (the best intercept of a
direction included: :mod:`csvm_stats.optimization.intercept_shift`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from csvm_stats.optimization import intercept_shift
from csvm_stats.optimization.intercept_shift import MARGIN_TOL
from csvm_stats.optimization.budget import NO_DEADLINE, Deadline, clock_reader
from csvm_stats.optimization.direction_search import Closest, feasible_point, search_directions
from csvm_stats.optimization.problem import RateRequirement
from csvm_stats.optimization.svm_dual import CHUNK, SVMDual
from csvm_stats.optimization.tightening import SVMReference

SCALE_FACTORS: tuple[float, ...] = (1.0, 1.5, 2.0, 4.0, 8.0, 16.0)
POLISH_ROUNDS = 3
MAX_SVM_STEPS = 2_000_000  # SMO pair steps of one warm-start SVM fit
charged_cpu = clock_reader("cpu")  # CPU seconds less numba's compilation (what a round costs once compiled)
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
ROUND_SECONDS = 0.05  # a warm-start SMO chunk longer than this on its deadline's clock shortens the next ones


@dataclass(frozen=True)
class WarmStart:
    """A feasible CSVM point: direction, intercept, anchor indicators and objective."""

    w: np.ndarray
    b: float
    z: np.ndarray
    xi: np.ndarray
    objective: float


def step_work(dual: SVMDual) -> int:
    """Kernel-row entries one SMO step on ``dual`` reads: the number of rows (Gram mode) or rows times features
    (feature mode)."""
    rows = dual.y.shape[0]
    return rows if dual.gram is not None else rows * max(1, dual.phi.shape[1])


def _chunk_steps(per_step: int) -> int:
    if per_step <= SMALL_STEP:
        return CHUNK
    return int(min(CHUNK, max(MIN_CHUNK, CHUNK_WORK // per_step)))


def smo_chunk(dual: SVMDual) -> int:
    """SMO steps of one compiled call on ``dual``: CHUNK for small steps, else about CHUNK_WORK work (at least
    MIN_CHUNK steps); :func:`step_work` is the work of a step.
    """
    return _chunk_steps(step_work(dual))


def chunk_work(rows: int, columns: int) -> int:
    """The work of one :func:`smo_chunk` call of an SVM dual on ``rows`` feature rows of ``columns`` entries (Gram
    mode when :func:`gram_matrix` would build one): what the search does between two looks at the clock."""
    per_step = rows if columns > GRAM_COLUMNS_RATIO * rows else rows * max(1, columns)
    return _chunk_steps(per_step) * per_step


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
    (module docstring: the point and the bound stay valid). A chunk that takes
    longer than ROUND_SECONDS on the deadline's clock (the wall clock on a loaded
    machine) makes the next ones proportionally shorter, down to MIN_CHUNK steps,
    so that the deadline is seen about as often in wall time as in CPU time (a
    deadline already passed gets one round of MIN_CHUNK steps); the
    CPU cost of every chunk per unit of work is noted on the deadline
    (:meth:`~csvm_stats.optimization.budget.Deadline.note_step`).
    """
    dual = SVMDual(phi, y, C * weight / 2.0, gram, tol)
    active, chunk, work = np.arange(y.shape[0]), smo_chunk(dual), step_work(dual)
    if deadline.expired():  # one short round: a direction and a valid (weak) bound, nearly no time
        chunk = min(chunk, MIN_CHUNK)
    alpha, steps = None, 0
    while True:
        cpu0, clock0 = charged_cpu(), deadline.read()
        solution = dual.solve(active, alpha, min(chunk, MAX_SVM_STEPS - steps))
        alpha, steps = solution.alpha, steps + solution.steps
        deadline.note_step(charged_cpu() - cpu0, solution.steps * work)  # a first call's compilation left out
        if solution.converged or steps >= MAX_SVM_STEPS or deadline.expired():
            return solution.w, solution.b, solution.bound
        took = deadline.read() - clock0
        if math.isfinite(deadline.at) and took > ROUND_SECONDS:
            chunk = max(MIN_CHUNK, int(chunk * ROUND_SECONDS / took))


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


def best_shift(
    w0: np.ndarray,
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    C: float,
    weight: np.ndarray,
    requirements: Sequence[RateRequirement],
    factors: Sequence[float] = SCALE_FACTORS,
) -> WarmStart | None:
    """Steps 2 and 3: the best scaled and shifted version of direction ``w0`` as a warm start.

    For each scale factor the exact best intercept among those meeting every
    requirement comes from :func:`csvm_stats.optimization.intercept_shift.best_shift`
    (O(n log n) for TPR, TNR and accuracy requirements alike); ``z`` marks the anchor
    points whose margin is met and ``xi`` holds the training hinge losses.
    """
    found = intercept_shift.best_shift(w0, phi_train, y_train, phi_anchor, y_anchor, C, weight, requirements,
                                       factors if requirements else factors[:1])  # scaling only helps requirements
    if found is None:
        return None
    value, w, b = found
    return WarmStart(w, b, *_indicators(w, b, phi_train, y_train, phi_anchor, y_anchor), float(value))


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
    w0, _, _ = fit_svm(gram, phi, y, C, np.r_[weight, np.ones(y_anchor.shape[0])], deadline=deadline)
    best = best_shift(w0, *args)
    if best is None or not requirements:
        return best
    return _polish(best, phi, y, gram, args, deadline)


def _polish(best: WarmStart, phi: np.ndarray, y: np.ndarray, gram: np.ndarray | None, args: tuple,
            deadline: Deadline) -> WarmStart:
    """Step 4 of the module docstring from the feasible point ``best`` (``args``: :func:`best_shift`'s data)."""
    phi_train, _, _, _, C, weight, _ = args
    n_i = phi_train.shape[0]
    for _ in range(POLISH_ROUNDS):
        if deadline.expired():
            break
        rows = np.r_[np.arange(n_i), n_i + np.flatnonzero(best.z > 0.5)]
        w_k = np.r_[weight, np.full(rows.size - n_i, ANCHOR_WEIGHT)]
        w1, _, _ = fit_svm(None if gram is None else gram[np.ix_(rows, rows)], phi[rows], y[rows], C, w_k,
                           deadline=deadline)
        candidate = best_shift(w1, *args)
        if candidate is None or candidate.objective >= best.objective * (1 - 1e-6):
            break
        best = candidate
    return best


def joint_count_start(
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
) -> tuple[WarmStart | None, Closest]:
    """When :func:`shifted_intercept_start` finds no start: the directions of
    :mod:`csvm_stats.optimization.direction_search` (discriminants, class-weighted SVMs, target-set LPs) until
    one meets the requirements; its best scale and intercept, improved by the SVM on I with hard margins at the
    anchor points it meets and polished (step 4), as the start (``None``: none did), and the closest
    rule found (for the fit's message when the search finds none either)."""
    phi = np.vstack([phi_train, phi_anchor])
    y = np.r_[y_train, y_anchor]
    base = np.r_[weight, np.ones(y_anchor.shape[0])]

    def svm_direction(row_weights: np.ndarray) -> np.ndarray:
        return fit_svm(gram, phi, y, C, base * row_weights, deadline=deadline)[0]

    found = search_directions(phi_train, y_train, phi_anchor, y_anchor, requirements, svm_direction, deadline)
    point = None if found.direction is None else feasible_point(
        found.direction, phi_train, y_train, phi_anchor, y_anchor, C, weight, requirements)
    if point is None:
        return None, found.closest
    value, w, b = point
    args = (phi_train, y_train, phi_anchor, y_anchor, C, weight, requirements)
    met = np.flatnonzero(y_anchor * (phi_anchor @ w + b) >= 1.0 - MARGIN_TOL)
    start = WarmStart(w, b, *_indicators(w, b, phi_train, y_train, phi_anchor, y_anchor), float(value))
    # the SVM on I whose margins at the met anchor points are hard (they are separable: this point meets them)
    rows = np.r_[np.arange(phi_train.shape[0]), phi_train.shape[0] + met]
    w_hard = fit_svm(None if gram is None else gram[np.ix_(rows, rows)], phi[rows], y[rows], C,
                     np.r_[weight, np.full(met.size, np.inf)], deadline=deadline)[0]
    hard = best_shift(w_hard, *args)
    if hard is not None and hard.objective < start.objective:
        start = hard
    return _polish(start, phi, y, gram, args, deadline), found.closest


def _indicators(w: np.ndarray, b: float, phi_train: np.ndarray, y_train: np.ndarray, phi_anchor: np.ndarray,
                y_anchor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step 3: ``z`` (anchor margins met) and ``xi`` (training hinge losses) of (w, b)."""
    z = (y_anchor * (phi_anchor @ w + b) >= 1.0 - MARGIN_TOL).astype(float)
    return z, np.maximum(0.0, 1.0 - y_train * (phi_train @ w + b))
