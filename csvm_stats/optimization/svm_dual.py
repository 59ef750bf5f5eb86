r"""A warm-startable SVM dual solver (SMO, compiled with numba) for the node QPs of ``"bnb"``.

The node QP of the branch-and-bound is an SVM on the training sample I plus
the forced anchor points F as *hard* margin constraints,

.. math::

    D(F) = \min_{w, b, \xi \ge 0}\; w^\top w + C \sum_{i \in I} s_i \xi_i
    \quad\text{s.t.}\quad y_i(w^\top\phi_i + b) \ge 1 - \xi_i \ (i \in I),\;
    y_j(w^\top\phi_j + b) \ge 1 \ (j \in F).

Halving the objective gives the standard SVM with box :math:`U_i = C s_i / 2`
on I and :math:`U_j = \infty` on F; its Lagrange dual is

.. math::

    \max_\alpha\; g(\alpha) = \sum_t \alpha_t - \tfrac12 \Big\|\sum_t \alpha_t y_t \phi_t\Big\|^2
    \quad\text{s.t.}\quad 0 \le \alpha_t \le U_t,\; \sum_t y_t \alpha_t = 0 .

By weak duality **every** feasible :math:`\alpha` gives :math:`D(F) \ge 2 g(\alpha)`,
whether or not the solver has converged; so the value returned is a valid
lower bound at any stopping point (iteration cap, early stop once the bound
prunes the node). SMO keeps :math:`\alpha` feasible: each step moves a pair
along :math:`y_i\alpha_i + y_j\alpha_j = \text{const}` inside the box (the
pair is chosen by the second-order rule of Fan, Chen and Lin 2005, libsvm's
WSS 3); before the bound is read, the rounding drift of :math:`\sum y_t\alpha_t`
is removed by shrinking the alphas of the heavier class (which stays in the box).

*Warm start.* A child node adds forced points to its parent's QP: the
parent's :math:`\alpha` padded with zeros is feasible for the child and has the
same value, and SMO only increases :math:`g`, so a child's bound never falls
below its parent's. Unconverged forced sets whose hyperplane does not exist
make the dual unbounded (:math:`\alpha_F \to \infty`): the caller tells them
apart with an LP.

Two kernels: *features* (``gram=None``: :math:`K_{st} = \phi_s^\top\phi_t`,
:math:`w` kept explicitly, O(m d) per step) and *Gram* (a precomputed matrix,
gradients updated from two kernel rows, O(m) per step). Feature mode also
takes Newton steps on the free rows (:func:`_newton_block`): with few columns
more rows are free than the rank of their kernel matrix, and pair steps
zigzag there for thousands of steps. In Gram mode (kernels at exact rank)
most rows are free (australian, RBF gamma = 4: a median 359 of 433), too
many for a dense step; with a local kernel (:func:`local_kernel`) Gram mode
takes conjugate-gradient blocks on them instead (:func:`_cg_block`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

TAU = 1e-12  # curvature floor of a pair step (libsvm's TAU)
FAST = {"nsz", "arcp", "contract", "reassoc"}  # reassociation only: infinite boxes stay exact
CHUNK = 20000  # SMO steps per compiled call (the caller checks time and interrupts between calls)
# SMO steps between two shrinking passes (libsvm: 1000); the first pass also follows the first step and every
# full check. Warm-started node solves are short, so shrinking must start early: bnb proved synthetic
# n = 1000 in 7.0 CPU-s at 20, 8.6 at 50, 12.7 at 1000; n = 2000 (same tree, side by side under load) in
# 92 CPU-s at 20, 84 at 10, 76-78 at 10 with the early passes (80 at 5).
SHRINK_PERIOD = 10
# Newton steps on the free rows (feature mode, :func:`_newton_block`): every BLOCK_PERIOD-th selection pass is one,
# of at most BLOCK_ITERATIONS active-set iterations, on at most BLOCK_ROWS rows (more: pair steps only), with the
# ridge BLOCK_RIDGE * mean diagonal that makes their system definite. On 305 node QPs captured from the synthetic
# n = 2000 search they cut the node solver's CPU time 2.5x (steps 27x) at bounds equal in the median
# (benchmarks/node_qp.py, results/node_qp.md); every 2nd pass beat every 1st / 3rd, 20 iterations beat 5.
BLOCK_PERIOD = 2
BLOCK_ITERATIONS = 20
BLOCK_ROWS = 64
BLOCK_RIDGE = 1e-6
# Conjugate-gradient blocks on the free rows (Gram mode, :func:`_cg_block`), taken when the kernel is local: in
# CG_LOCAL_QUANTILE of the rows the off-diagonal mass sum_{s != t} |K_ts| / K_tt is below CG_LOCAL_MASS (there Q_FF
# is nearly diagonal, and a diagonally preconditioned CG solves its Newton system in a few iterations). Node QPs
# captured from australian C = 8, gamma = 8 TNR (90% quantile of the mass 0.04) took 2.3x less CPU and 6.6x fewer
# steps (benchmarks/node_qp.py --gram, results/node_qp_gram.md); forced on at gamma = 0.5, 1, 2, 4 (C = 1, 1, 1, 2;
# quantiles 6.8, 2.1, 0.8, 0.3) they took 0.68-1.05x the CPU of pair steps, so they stay off there.
# A node QP's first block follows its CG_FIRST-th pair step (short QPs never pay for one), later ones every
# CG_PERIOD pair steps; each block runs at most CG_ITERATIONS iterations, to a relative residual of CG_RTOL.
CG_LOCAL_QUANTILE = 0.9
CG_LOCAL_MASS = 0.1
CG_LOCAL_ROWS = 64  # rows that local_kernel reads
CG_FIRST = 50
CG_PERIOD = 100
CG_ITERATIONS = 10
CG_RTOL = 1e-1


@dataclass
class DualSolution:
    """A dual point and what it gives: primal (w, b), the bound ``2 g(alpha)``, convergence."""

    alpha: np.ndarray  # one entry per row of the stacked [I; J]; zero outside the active rows
    w: np.ndarray
    b: float
    bound: float
    converged: bool
    steps: int


@njit(cache=True)
def _pair_step(yi, yj, ai, aj, ui, uj, gi, gj, quad):
    """New (alpha_i, alpha_j) after the SMO step on the pair, clipped to the box.

    When j's own limit binds, alpha_j is set to it exactly (as libsvm does), so
    that a point at its limit leaves the working set instead of creeping by ulps.
    """
    if quad <= 0.0:
        quad = TAU
    if yi != yj:  # alpha_i - alpha_j stays constant
        diff = ai - aj
        lo, hi = max(0.0, diff), min(ui, uj + diff)
        ni = min(max(ai + (-gi - gj) / quad, lo), hi)
        nj = ni - diff
        if ni == lo and lo == diff:
            nj = 0.0
        elif ni == hi and hi == uj + diff:
            nj = uj
        return ni, nj
    total = ai + aj  # alpha_i + alpha_j stays constant
    lo, hi = max(0.0, total - uj), min(ui, total)
    ni = min(max(ai - (gi - gj) / quad, lo), hi)
    nj = total - ni
    if ni == lo and lo == total - uj:
        nj = uj
    elif ni == hi and hi == total:
        nj = 0.0
    return ni, nj


@njit(cache=True, fastmath=FAST)
def _newton_block(phi, y, upper, alpha, w, grad, work, n_work, i, j, rows, chol, u, v, sol):
    r"""Active-set Newton iterations on the free rows of the working list (and the pair i, j).

    Returns (moved, change of sum alpha); ``moved`` is False when no step was taken.

    SMO's pair steps zigzag for thousands of steps when more rows are free
    (:math:`0 < \alpha_t < U_t`) than the rank of their kernel matrix (p + 1 with
    the linear kernel): a new hard row's alpha grows by 16 in steps of ~0.01. On the
    free set F this takes the Newton direction of the dual, made definite by a ridge,

    .. math::

        \min_d\; \nabla^\top d + \tfrac12 d^\top (Q_{FF} + \epsilon I) d \quad\text{s.t.}\quad y_F^\top d = 0,

    (``grad`` is :math:`\nabla = Q\alpha - 1` of the minimised :math:`-g`; Cholesky of
    :math:`A = Q_{FF} + \epsilon I`, then :math:`d = u + \lambda v` with :math:`A u = -\nabla_F`,
    :math:`A v = y_F` and :math:`\lambda` from :math:`y_F^\top d = 0`), and the exact
    minimiser of the true quadratic along d inside the box. A row at a box limit
    that d pushes out leaves F (and d is solved again); a row that the step takes
    to its limit is set there exactly and leaves F; the iterations stop at an
    interior minimiser, an ascent or unbounded direction, or the iteration cap.
    Every iterate stays feasible (d keeps :math:`\sum y_t\alpha_t`; clipping is
    rounding only) and no step lowers g, so every bound read later stays valid.
    """
    d = phi.shape[1]
    f = 0
    for q in range(n_work):
        t = work[q]
        if (0.0 < alpha[t] < upper[t]) or t == i or t == j:
            if f == rows.shape[0]:
                return False, 0.0  # too many free rows for a dense step: SMO's pair steps only
            rows[f] = t
            f += 1
    moved, change = False, 0.0
    for _ in range(BLOCK_ITERATIONS):
        if f < 2:
            break
        trace = 0.0
        for r in range(f):
            a = rows[r]
            for c in range(r + 1):
                b = rows[c]
                k = 0.0
                for m in range(d):
                    k += phi[a, m] * phi[b, m]
                chol[r, c] = y[a] * y[b] * k
            trace += chol[r, r]
        ridge = BLOCK_RIDGE * trace / f + TAU
        definite = True
        for r in range(f):  # Cholesky in place (lower triangle)
            chol[r, r] += ridge
            for c in range(r + 1):
                acc = chol[r, c]
                for m in range(c):
                    acc -= chol[r, m] * chol[c, m]
                if r == c:
                    if acc <= 0.0:
                        definite = False
                        break
                    chol[r, r] = math.sqrt(acc)
                else:
                    chol[r, c] = acc / chol[c, c]
            if not definite:
                break
        if not definite:
            break
        for r in range(f):  # forward and back substitution for u and v at once
            au, av = -grad[rows[r]], y[rows[r]]
            for m in range(r):
                au -= chol[r, m] * u[m]
                av -= chol[r, m] * v[m]
            u[r], v[r] = au / chol[r, r], av / chol[r, r]
        for r in range(f - 1, -1, -1):
            au, av = u[r], v[r]
            for m in range(r + 1, f):
                au -= chol[m, r] * u[m]
                av -= chol[m, r] * v[m]
            u[r], v[r] = au / chol[r, r], av / chol[r, r]
        yu, yv = 0.0, 0.0
        for r in range(f):
            yu += y[rows[r]] * u[r]
            yv += y[rows[r]] * v[r]
        lam = -yu / yv
        kept = 0
        for r in range(f):  # rows at a limit that d pushes out of the box leave F
            t = rows[r]
            dr = u[r] + lam * v[r]
            if (alpha[t] <= 0.0 and dr < 0.0) or (alpha[t] >= upper[t] and dr > 0.0):
                continue
            rows[kept] = t
            sol[kept] = dr
            kept += 1
        if kept < f:
            f = kept
            continue
        residual = 0.0  # y'd = 0 up to cancellation in u + lam v (both grow like 1 / ridge): project it out,
        for r in range(f):  # or a long step along a short d breaks sum y alpha = 0
            residual += y[rows[r]] * sol[r]
        for r in range(f):
            sol[r] -= residual * y[rows[r]] / f
        slope, curvature = 0.0, 0.0
        for m in range(d):
            s = 0.0
            for r in range(f):
                s += sol[r] * y[rows[r]] * phi[rows[r], m]
            curvature += s * s
        for r in range(f):
            slope += grad[rows[r]] * sol[r]
        if slope >= 0.0:
            break
        step, block = -slope / curvature if curvature > 0.0 else np.inf, -1
        for r in range(f):  # the box: the first row to reach its limit
            t = rows[r]
            if sol[r] > 0.0:
                limit = (upper[t] - alpha[t]) / sol[r]
            elif sol[r] < 0.0:
                limit = -alpha[t] / sol[r]
            else:
                continue
            if limit <= step:
                step, block = limit, r
        if step == np.inf:
            break  # unbounded along d (a forced set no hyperplane separates): the caller's LP decides
        moved = True
        for r in range(f):
            t = rows[r]
            new = min(max(alpha[t] + step * sol[r], 0.0), upper[t])
            if r == block:
                new = upper[t] if sol[r] > 0.0 else 0.0
            delta = new - alpha[t]
            alpha[t] = new
            change += delta
            for m in range(d):
                w[m] += delta * y[t] * phi[t, m]
        for r in range(f):
            t = rows[r]
            s = 0.0
            for m in range(d):
                s += phi[t, m] * w[m]
            grad[t] = y[t] * s - 1.0
        if block < 0:
            break
        f -= 1
        rows[block] = rows[f]
    return moved, change


@njit(cache=True, fastmath=FAST)
def _smo_features(phi, y, upper, sq, alpha, active, tol, max_steps, stop_value, block_period):
    """SMO in feature mode with shrinking and Newton steps; ``w = sum alpha_t y_t phi_t`` is kept. Returns (steps, gap).

    ``sq`` holds the squared norms of the rows. Every ``block_period``-th selection
    pass (0: never) takes a Newton step on the free rows (:func:`_newton_block`)
    instead of the pair step (which it falls back to when that does not move);
    ``steps`` counts both.

    Shrinking (libsvm's rule): a row at a box limit whose gradient points out
    of the box beyond the current violating range leaves the working list;
    the gradients come from w, so a final pass over every active row checks
    convergence (and restarts with all rows when it fails).
    """
    d = phi.shape[1]
    grad = np.empty(phi.shape[0])
    w = np.zeros(d)
    sum_alpha = 0.0
    for t in active:
        if alpha[t] != 0.0:
            sum_alpha += alpha[t]
            for k in range(d):
                w[k] += alpha[t] * y[t] * phi[t, k]
    work = active.copy()
    n_work = work.shape[0]
    period = min(active.shape[0], SHRINK_PERIOD)
    countdown = 1  # the first shrinking pass right after the first selection pass
    rows = np.empty(BLOCK_ROWS, dtype=np.int64)  # buffers of the Newton steps
    chol = np.empty((BLOCK_ROWS, BLOCK_ROWS))
    buf_u, buf_v, buf_d = np.empty(BLOCK_ROWS), np.empty(BLOCK_ROWS), np.empty(BLOCK_ROWS)
    since_block = 0
    gap = np.inf
    steps = 0
    while steps < max_steps:
        gmax, i = -np.inf, -1
        for q in range(n_work):
            t = work[q]
            s = 0.0
            for k in range(d):
                s += phi[t, k] * w[k]
            grad[t] = y[t] * s - 1.0
            if (y[t] > 0 and alpha[t] < upper[t]) or (y[t] < 0 and alpha[t] > 0):
                v = -y[t] * grad[t]
                if v > gmax:
                    gmax, i = v, t
        gmin, j, best = np.inf, -1, np.inf
        for q in range(n_work):
            t = work[q]
            if (y[t] > 0 and alpha[t] > 0) or (y[t] < 0 and alpha[t] < upper[t]):
                v = -y[t] * grad[t]
                if v < gmin:
                    gmin = v
                diff = gmax - v
                if diff > 0.0:
                    kit = 0.0
                    for k in range(d):
                        kit += phi[i, k] * phi[t, k]
                    quad = sq[i] + sq[t] - 2.0 * kit
                    if quad <= 0.0:
                        quad = TAU
                    score = -diff * diff / quad
                    if score < best:
                        best, j = score, t
        gap = gmax - gmin
        if i < 0 or j < 0 or gap <= tol:
            if n_work < active.shape[0]:  # converged on the working list: check every row
                work[:] = active
                n_work = active.shape[0]
                countdown = 1  # and again right after this full pass, when it does not converge
                continue
            break
        if stop_value < np.inf and steps % 16 == 0:
            ww = 0.0
            for k in range(d):
                ww += w[k] * w[k]
            if 2.0 * (sum_alpha - 0.5 * ww) >= stop_value:
                break
        countdown -= 1
        if countdown == 0:
            countdown = period
            kept = 0
            for q in range(n_work):
                t = work[q]
                v = -y[t] * grad[t]
                only_up = (y[t] > 0 and alpha[t] == 0.0) or (y[t] < 0 and alpha[t] == upper[t])
                only_low = (y[t] > 0 and alpha[t] == upper[t]) or (y[t] < 0 and alpha[t] == 0.0)
                if not ((only_up and v < gmin) or (only_low and v > gmax)):
                    work[kept] = t
                    kept += 1
            n_work = kept
        since_block += 1
        if since_block == block_period:
            since_block = 0
            moved, change = _newton_block(phi, y, upper, alpha, w, grad, work, n_work, i, j, rows, chol, buf_u, buf_v,
                                          buf_d)
            if moved:
                sum_alpha += change
                steps += 1
                continue
        kij = 0.0
        for k in range(d):
            kij += phi[i, k] * phi[j, k]
        qij = y[i] * y[j] * kij
        if y[i] != y[j]:
            quad = sq[i] + sq[j] + 2.0 * qij
        else:
            quad = sq[i] + sq[j] - 2.0 * qij
        ni, nj = _pair_step(y[i], y[j], alpha[i], alpha[j], upper[i], upper[j], grad[i], grad[j], quad)
        di, dj = ni - alpha[i], nj - alpha[j]
        alpha[i], alpha[j] = ni, nj
        sum_alpha += di + dj
        for k in range(d):
            w[k] += di * y[i] * phi[i, k] + dj * y[j] * phi[j, k]
        steps += 1
    return steps, gap


@njit(cache=True)
def _cg_block(gram, diag, y, upper, alpha, grad, active, i, j, pos, d, r, z, p, q, qd):
    r"""A Newton step on the free rows of Gram mode (and the pair i, j), by projected, preconditioned CG.

    Returns False when no step was taken.

    With a local kernel (high-gamma RBF: each point almost alone in the kernel's
    reach) nearly every row is free, and a new forced row moves the intercept,
    which moves every free alpha a little: SMO needs a pair step per row
    (australian, C = 8, gamma = 8: ~400 steps per node QP). On the free set F this
    solves the Newton system of the dual approximately,

    .. math::

        \min_d\; \nabla_F^\top d + \tfrac12 d^\top Q_{FF} d \quad\text{s.t.}\quad y_F^\top d = 0,

    by conjugate gradients preconditioned with :math:`D = \mathrm{diag}(Q_{FF})`
    and projected onto :math:`y_F^\top d = 0` (the preconditioned residual is
    :math:`D^{-1}(r - \lambda y_F)` with :math:`\lambda` from :math:`y_F^\top D^{-1}(r - \lambda y_F) = 0`),
    at most CG_ITERATIONS iterations, to a relative residual of CG_RTOL; then y'd is
    projected to exactly 0 and the step is the exact minimiser of the true
    quadratic along d inside the box (the first row to reach its limit is set
    there exactly). Every iterate stays feasible and no step lowers g, so every
    bound read later stays valid; the gradient is updated from :math:`Q_{AF} d`.
    """
    m = active.shape[0]
    f = 0
    for k in range(m):  # pos: the block's rows, as positions in active
        t = active[k]
        if (0.0 < alpha[t] < upper[t]) or t == i or t == j:
            pos[f] = k
            f += 1
    if f < 2:
        return False
    yy, yr = 0.0, 0.0  # y'D^-1 y and y'D^-1 r
    for a in range(f):
        t = active[pos[a]]
        r[a] = -grad[t]
        d[a] = 0.0
        yy += 1.0 / max(diag[t], TAU)
        yr += y[t] * r[a] / max(diag[t], TAU)
    rz = 0.0
    for a in range(f):
        t = active[pos[a]]
        z[a] = (r[a] - yr / yy * y[t]) / max(diag[t], TAU)
        p[a] = z[a]
        rz += r[a] * z[a]
    rz0 = rz
    for _ in range(CG_ITERATIONS):
        pq = 0.0
        for a in range(f):
            ta = active[pos[a]]
            row = gram[ta]
            s = 0.0
            for b in range(f):
                tb = active[pos[b]]
                s += y[tb] * row[tb] * p[b]
            q[a] = y[ta] * s
            pq += p[a] * q[a]
        if pq <= 0.0:
            break
        step = rz / pq
        yr = 0.0
        for a in range(f):
            t = active[pos[a]]
            d[a] += step * p[a]
            r[a] -= step * q[a]
            yr += y[t] * r[a] / max(diag[t], TAU)
        rz_new = 0.0
        for a in range(f):
            t = active[pos[a]]
            z[a] = (r[a] - yr / yy * y[t]) / max(diag[t], TAU)
            rz_new += r[a] * z[a]
        if rz_new <= CG_RTOL * CG_RTOL * rz0:
            break
        for a in range(f):
            p[a] = z[a] + rz_new / rz * p[a]
        rz = rz_new
    residual = 0.0  # y'd = 0 up to rounding: project it out, or a long step breaks sum y alpha = 0
    for a in range(f):
        residual += y[active[pos[a]]] * d[a]
    slope = 0.0
    for a in range(f):
        t = active[pos[a]]
        d[a] -= residual * y[t] / f
        slope += grad[t] * d[a]
    if slope >= 0.0:
        return False
    for k in range(m):  # qd = K_{AF} (y_F o d): Q_{AF} d = y_A o qd, for the curvature and the gradient update
        qd[k] = 0.0
    for a in range(f):
        t = active[pos[a]]
        c = y[t] * d[a]
        row = gram[t]
        for k in range(m):
            qd[k] += c * row[active[k]]
    curvature = 0.0
    step, block = np.inf, -1
    for a in range(f):
        t = active[pos[a]]
        curvature += y[t] * d[a] * qd[pos[a]]
        if d[a] > 0.0:
            limit = (upper[t] - alpha[t]) / d[a]
        elif d[a] < 0.0:
            limit = -alpha[t] / d[a]
        else:
            continue
        if limit < step:
            step, block = limit, a
    if curvature > 0.0 and -slope / curvature < step:
        step, block = -slope / curvature, -1
    if step == np.inf:
        return False  # unbounded along d (a forced set no hyperplane separates): the caller's LP decides
    if step <= 0.0:
        return False  # i or j at a limit that d pushes out of the box: the pair step instead
    for a in range(f):
        t = active[pos[a]]
        alpha[t] = min(max(alpha[t] + step * d[a], 0.0), upper[t])
        if a == block:
            alpha[t] = upper[t] if d[a] > 0.0 else 0.0
    for k in range(m):
        t = active[k]
        grad[t] += step * y[t] * qd[k]
    return True


@njit(cache=True)
def _gram_first_row(y, upper, alpha, grad, active):
    """SMO's i: the row that can move up (in y alpha) with the largest -y_t grad_t; (that value, its row)."""
    gmax, i = -np.inf, -1
    for t in active:
        if (y[t] > 0 and alpha[t] < upper[t]) or (y[t] < 0 and alpha[t] > 0):
            v = -y[t] * grad[t]
            if v > gmax:
                gmax, i = v, t
    return gmax, i


@njit(cache=True)
def _smo_gram(gram, diag, y, upper, alpha, grad, active, tol, max_steps, stop_value, cg_period):
    """SMO in Gram mode; ``grad`` (= Q alpha - 1 on the active rows) is kept. Returns (steps, gap).

    ``diag`` is the Gram matrix's diagonal. Two passes over the active rows per
    pair step: the choice of j (reading kernel row i), and the gradient update
    from rows i and j, which also chooses the next step's i. ``cg_period`` > 0:
    a CG block (:func:`_cg_block`) instead of the pair step after CG_FIRST steps
    and then every ``cg_period`` steps (the pair step when it does not move);
    ``steps`` counts both.
    """
    m = active.shape[0]
    size = m if cg_period > 0 else 0  # buffers of the CG blocks
    pos = np.empty(size, dtype=np.int64)
    d, r, z, p, q, qd = np.empty(size), np.empty(size), np.empty(size), np.empty(size), np.empty(size), np.empty(size)
    countdown = CG_FIRST
    gap = np.inf
    steps = 0
    gmax, i = _gram_first_row(y, upper, alpha, grad, active)
    while steps < max_steps:
        gmin, j, best = np.inf, -1, np.inf
        if i >= 0:
            row = gram[i]
            for k in range(m):
                t = active[k]
                if (y[t] > 0 and alpha[t] > 0) or (y[t] < 0 and alpha[t] < upper[t]):
                    v = -y[t] * grad[t]
                    if v < gmin:
                        gmin = v
                    diff = gmax - v
                    if diff > 0.0:
                        quad = diag[i] + diag[t] - 2.0 * row[t]
                        if quad <= 0.0:
                            quad = TAU
                        score = -diff * diff / quad
                        if score < best:
                            best, j = score, t
        gap = gmax - gmin
        if i < 0 or j < 0 or gap <= tol:
            break
        if stop_value < np.inf and steps % 16 == 0:
            value = 0.0
            for t in active:  # g = sum alpha - alpha'Q alpha / 2 = sum alpha (1 - (grad + 1) / 2)
                value += alpha[t] * (1.0 - 0.5 * (grad[t] + 1.0))
            if 2.0 * value >= stop_value:
                break
        steps += 1
        if cg_period > 0:
            countdown -= 1
            if countdown == 0:
                countdown = cg_period
                if _cg_block(gram, diag, y, upper, alpha, grad, active, i, j, pos, d, r, z, p, q, qd):
                    gmax, i = _gram_first_row(y, upper, alpha, grad, active)
                    continue
        qij = y[i] * y[j] * gram[i, j]
        if y[i] != y[j]:
            quad = diag[i] + diag[j] + 2.0 * qij
        else:
            quad = diag[i] + diag[j] - 2.0 * qij
        ni, nj = _pair_step(y[i], y[j], alpha[i], alpha[j], upper[i], upper[j], grad[i], grad[j], quad)
        di, dj = ni - alpha[i], nj - alpha[j]
        alpha[i], alpha[j] = ni, nj
        ci, cj = di * y[i], dj * y[j]
        row_i, row_j = gram[i], gram[j]
        gmax, i = -np.inf, -1
        for k in range(m):  # the gradient update, and the next step's i in the same pass
            t = active[k]
            grad[t] += y[t] * (ci * row_i[t] + cj * row_j[t])
            if (y[t] > 0 and alpha[t] < upper[t]) or (y[t] < 0 and alpha[t] > 0):
                v = -y[t] * grad[t]
                if v > gmax:
                    gmax, i = v, t
    return steps, gap


@njit(cache=True)
def _gram_gradient(gram, y, alpha, active):
    """``grad_t = y_t sum_s alpha_s y_s K_st - 1`` on the active rows.

    Summed row by row over the nonzero alphas (``K`` is symmetric, so row s of the
    C-ordered matrix holds the column s a column-wise sum would stride through):
    the same sums in the same order, read from contiguous memory.
    """
    grad = np.zeros(y.shape[0])
    m = active.shape[0]
    acc = np.zeros(m)
    for s in active:
        if alpha[s] != 0.0:
            c = alpha[s] * y[s]
            row = gram[s]
            for q in range(m):
                acc[q] += c * row[active[q]]
    for q in range(m):
        t = active[q]
        grad[t] = y[t] * acc[q] - 1.0
    return grad


@njit(cache=True, fastmath=FAST)
def _summary(phi, y, upper, alpha, active):
    """``(w, b, 2 g(alpha))`` of a dual point on the active rows, in two passes over them.

    The bound is read without the rounding drift of ``sum y alpha``: the
    alphas of the heavier class are scaled down (which stays in the box; for
    the bound only, so that alphas at their box limits stay there for SMO).
    The intercept is the mean of ``y_t - w'phi_t`` over the free rows (0 <
    alpha_t < U_t), else the midpoint of the KKT interval that the rows at
    their box limits leave.
    """
    d = phi.shape[1]
    w_pos, w_neg = np.zeros(d), np.zeros(d)
    sum_pos, sum_neg = 0.0, 0.0
    for t in active:
        a = alpha[t]
        if a > 0.0:
            if y[t] > 0:
                sum_pos += a
                for k in range(d):
                    w_pos[k] += a * phi[t, k]
            else:
                sum_neg += a
                for k in range(d):
                    w_neg[k] -= a * phi[t, k]
    f_pos = sum_neg / sum_pos if sum_pos > sum_neg else 1.0
    f_neg = sum_pos / sum_neg if sum_neg > sum_pos else 1.0
    w = w_pos + w_neg
    wb = f_pos * w_pos + f_neg * w_neg
    bound = 2.0 * (f_pos * sum_pos + f_neg * sum_neg - 0.5 * (wb @ wb))
    free_sum, n_free = 0.0, 0
    hi, lo = -np.inf, np.inf
    for t in active:
        s = 0.0
        for k in range(d):
            s += phi[t, k] * w[k]
        kkt = y[t] - s
        a = alpha[t]
        if 0.0 < a < upper[t]:
            free_sum += kkt
            n_free += 1
        if (y[t] > 0 and a < upper[t]) or (y[t] < 0 and a > 0.0):
            hi = max(hi, kkt)
        if (y[t] > 0 and a > 0.0) or (y[t] < 0 and a < upper[t]):
            lo = min(lo, kkt)
    if n_free > 0:
        b = free_sum / n_free
    elif np.isfinite(hi) and np.isfinite(lo):
        b = 0.5 * (hi + lo)
    else:
        b = hi if np.isfinite(hi) else lo
    return w, b, bound


def local_kernel(gram: np.ndarray) -> bool:
    r"""Is the off-diagonal kernel mass :math:`\sum_{s \ne t} |K_{ts}| / K_{tt}` below CG_LOCAL_MASS in
    CG_LOCAL_QUANTILE of the rows (a zero diagonal counts as infinite mass)?

    Read on every k-th row, k = max(1, n // CG_LOCAL_ROWS): fewer than 2 CG_LOCAL_ROWS rows, all of them
    when n < 2 CG_LOCAL_ROWS (a fit builds several
    solvers; all n rows cost 1 ms per solver at n = 460, 4% of a Wisconsin fit).
    """
    rows = np.arange(0, gram.shape[0], max(1, gram.shape[0] // CG_LOCAL_ROWS))
    diag = gram[rows, rows]
    off = np.abs(gram[rows]).sum(axis=1) - np.abs(diag)
    mass = np.divide(off, diag, out=np.full(diag.shape, np.inf), where=diag > 0)
    return bool(np.quantile(mass, CG_LOCAL_QUANTILE) < CG_LOCAL_MASS)


class SVMDual:
    """SMO on subsets ("active rows") of one stacked sample, warm-started from any feasible alpha.

    ``phi`` holds the feature rows of the stacked sample ``[I; J]``, ``y`` its
    labels, ``upper`` the box of each row (``C s_i / 2`` on I; the forced anchor
    rows get ``inf``); ``gram`` is ``phi @ phi.T`` when the rows are wide (or ``None``).
    ``newton=False`` turns off the Newton steps of feature mode and the CG blocks of Gram mode (pair steps
    only; for comparisons).
    """

    def __init__(self, phi: np.ndarray, y: np.ndarray, upper: np.ndarray, gram: np.ndarray | None, tol: float,
                 newton: bool = True):
        self.phi = np.ascontiguousarray(phi, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.upper = np.ascontiguousarray(upper, dtype=float)
        self.gram = None if gram is None else np.ascontiguousarray(gram, dtype=float)
        self.diag = None if gram is None else np.ascontiguousarray(np.diag(self.gram))
        self.sq = np.einsum("ij,ij->i", self.phi, self.phi)  # squared row norms (feature mode)
        self.tol = tol
        self.block_period = BLOCK_PERIOD if newton else 0
        self.cg_period = CG_PERIOD if newton and self.gram is not None and local_kernel(self.gram) else 0

    def solve(self, active: np.ndarray, alpha0: np.ndarray | None, max_steps: int,
              stop_value: float = math.inf, tol: float | None = None) -> DualSolution:
        """SMO from ``alpha0`` (zeros when ``None``) on the active rows, at most ``max_steps`` steps (pair
        steps, Newton steps on the free rows in feature mode and CG blocks in Gram mode, each counted as one).

        ``stop_value``: stop early once the bound ``2 g(alpha)`` reaches it (the node is pruned);
        ``tol``: the KKT gap at which SMO stops (default: the solver's).
        """
        tol = self.tol if tol is None else tol
        active = np.ascontiguousarray(active, dtype=np.int64)
        alpha = np.zeros(self.y.shape[0]) if alpha0 is None else alpha0.copy()
        if self.gram is None:
            steps, gap = _smo_features(self.phi, self.y, self.upper, self.sq, alpha, active, tol, max_steps,
                                       stop_value, self.block_period)
        else:
            grad = _gram_gradient(self.gram, self.y, alpha, active)
            steps, gap = _smo_gram(self.gram, self.diag, self.y, self.upper, alpha, grad, active, tol, max_steps,
                                   stop_value, self.cg_period)
        return self._read(alpha, active, steps, gap <= tol)

    def _read(self, alpha: np.ndarray, active: np.ndarray, steps: int, converged: bool) -> DualSolution:
        """Bound ``2 g(alpha)``, primal w and the KKT intercept (:func:`_summary`)."""
        w, b, bound = _summary(self.phi, self.y, self.upper, alpha, active)
        return DualSolution(alpha, w, b, bound, converged, steps)
