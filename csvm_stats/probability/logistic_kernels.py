r"""Compiled Newton iterations of the probability model (:mod:`csvm_stats.probability.score_model`).

The same maths as the NumPy code they replaced, in numba so that a Newton step
costs its flops and not the ~20 us of NumPy call overhead it had on the
30-column Wisconsin design (29 steps per model, 2 x 2 folds of set-up, 9
sigmoid steps). The products are still BLAS calls (numba's ``@``), the
Cholesky factorisation and triangular solves are loops over at most 65
columns. The outputs agree with the NumPy code up to rounding
(``tests/test_score_model_reference.py``: 1e-9 relative to a plain reference).

Compiled on first use and cached on disk (``cache=True``): a fresh process
loads the machine code from numba's cache, the first process after a change
compiles it (results file ``benchmarks/results/probabilities.md`` gives both costs).
"""

from __future__ import annotations

import numpy as np
from numba import njit

@njit(cache=True)
def sigmoid(z: np.ndarray) -> np.ndarray:
    """:math:`\\sigma(z) = (1 + \\tanh(z/2))/2` (no overflow for large :math:`|z|`)."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@njit(cache=True)
def weighted_gram(Z: np.ndarray, Zt: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:math:`Z^\\top W Z` as :math:`(Z^\\top W) Z` (``Zt`` is ``Z`` transposed, C-contiguous).

    A general product, also for the 65-column RBF design: called from numba,
    the symmetric product (BLAS syrk of :math:`W^{1/2} Z`) was no faster, 58
    against 52 CPU us at 284 rows and one thread.
    """
    return (Zt * w) @ Z


@njit(cache=True)
def solve_spd(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``matrix^-1 rhs`` by Cholesky (upper triangle read); least squares if a pivot is not positive."""
    m = rhs.size
    L = np.zeros((m, m))
    for j in range(m):
        d = matrix[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return np.linalg.lstsq(matrix, rhs, rcond=2.220446049250313e-16 * m)[0]
        L[j, j] = np.sqrt(d)
        for i in range(j + 1, m):
            s = matrix[j, i]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    x = rhs.copy()
    for i in range(m):  # L u = rhs
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):  # L' x = u
        s = x[i]
        for k in range(i + 1, m):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
    return x


@njit(cache=True)
def newton_logistic(Z: np.ndarray, Zt: np.ndarray, y: np.ndarray, lam: float, beta: np.ndarray,
                    steps: int, tol: float) -> np.ndarray:
    r"""Penalised logistic regression (column 0 of Z the unpenalised intercept) by Newton's method from ``beta``.

    Each step, with :math:`p = \sigma(Z\beta)`, :math:`W = \operatorname{diag}(p(1 - p))`
    and :math:`\Lambda = \operatorname{diag}(0, \lambda, \dots, \lambda)`, solves
    :math:`(Z^\top W Z + \Lambda + 10^{-12} I)\,\delta = Z^\top (p - y) + \Lambda \beta`
    and sets :math:`\beta \leftarrow \beta - \delta`; at most ``steps`` steps, fewer
    once a step is at most ``tol`` relative to :math:`\max(1, \|\beta\|_\infty)`.
    """
    m = Z.shape[1]
    for k in range(1, steps + 1):
        p = sigmoid(Z @ beta)
        hessian = weighted_gram(Z, Zt, p * (1.0 - p))
        gradient = Zt @ (p - y)
        hessian[0, 0] += 1e-12
        for j in range(1, m):
            hessian[j, j] += lam + 1e-12
            gradient[j] += lam * beta[j]
        step = solve_spd(hessian, gradient)
        beta = beta - step
        if k < steps and np.abs(step).max() <= tol * max(1.0, np.abs(beta).max()):
            break
    return beta


@njit(cache=True)
def penalty_paths(Z: np.ndarray, y: np.ndarray, fold: np.ndarray, n_folds: int, penalties: np.ndarray,
                  start: float, steps: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Each fold's penalty path: ``(betas, out_of_fold)``.

    Row ``fold[i]`` of the folds is the one row i is left out of. For fold f,
    ``betas[f, g]`` is the model on the other rows at ``penalties[g]`` (from
    the largest penalty down, warm-started, ``steps`` Newton steps each, the
    first from the intercept ``start``), and ``out_of_fold[g, i]`` the score
    of row i by the model of its own fold at ``penalties[g]``.
    """
    n, m = Z.shape
    n_pen = penalties.size
    betas = np.empty((n_folds, n_pen, m))
    out_of_fold = np.empty((n_pen, n))
    for f in range(n_folds):
        n_train = 0
        for i in range(n):
            n_train += fold[i] != f
        Zt_train = np.empty((m, n_train))
        y_train = np.empty(n_train)
        t = 0
        for i in range(n):
            if fold[i] != f:
                for j in range(m):
                    Zt_train[j, t] = Z[i, j]
                y_train[t] = y[i]
                t += 1
        Z_train = np.ascontiguousarray(Zt_train.T)
        beta = np.zeros(m)
        beta[0] = start
        for g in range(n_pen):
            beta = newton_logistic(Z_train, Zt_train, y_train, penalties[g], beta, steps, tol)
            betas[f, g] = beta
        for i in range(n):
            if fold[i] == f:
                for g in range(n_pen):
                    s = 0.0
                    for j in range(m):
                        s += Z[i, j] * betas[f, g, j]
                    out_of_fold[g, i] = s
    return betas, out_of_fold


@njit(cache=True)
def loss_and_probability(z: np.ndarray, target: np.ndarray, p: np.ndarray) -> float:
    r""":math:`\sum_i \log(1 + e^{z_i}) - t_i z_i`, with :math:`p_i = \sigma(z_i)` written into ``p`` (one
    exponential per row for both; no overflow for large :math:`|z|`)."""
    total = 0.0
    for i in range(z.size):
        e = np.exp(-abs(z[i]))
        total += max(z[i], 0.0) + np.log1p(e) - target[i] * z[i]
        p[i] = 1.0 / (1.0 + e) if z[i] >= 0.0 else e / (1.0 + e)
    return total


#: Step halvings a damped Newton step may take before the iteration stops (the loss no longer decreases).
MAX_HALVINGS = 40


@njit(cache=True)
def halved_step(Z: np.ndarray, target: np.ndarray, beta: np.ndarray, step: np.ndarray, loss: float,
                p: np.ndarray) -> tuple[float, float, bool]:
    r"""The step length :math:`2^{-h}` (smallest :math:`h \le` :data:`MAX_HALVINGS`) whose point
    :math:`\beta - 2^{-h}\delta` has a log loss not above ``loss``: ``(t, new_loss, found)``; when found, ``p``
    holds :math:`\sigma(Z(\beta - t\delta))` (the next Newton step's probabilities)."""
    t = 1.0
    q = np.empty(p.size)
    for _ in range(MAX_HALVINGS):
        new = loss_and_probability(Z @ (beta - t * step), target, q)
        if new <= loss:
            p[:] = q
            return t, new, True
        t *= 0.5
    return t, loss, False


@njit(cache=True)
def damped_newton_logistic(Z: np.ndarray, Zt: np.ndarray, target: np.ndarray, beta: np.ndarray,
                           steps: int, tol: float) -> np.ndarray:
    r"""Unpenalised logistic regression of ``target`` on a few columns by Newton's method with step halving.

    Each step solves :math:`(Z^\top W Z + 10^{-12} I)\,\delta = Z^\top (p - t)` and
    takes :math:`\beta - 2^{-h}\delta` with the smallest :math:`h \le` :data:`MAX_HALVINGS`
    whose log loss is not higher (:func:`halved_step`); it stops when no halving
    lowers the loss, after ``steps`` steps, or once a step is at most ``tol``
    relative to :math:`\max(1, \|\beta\|_\infty)`. The halving keeps the
    iteration from diverging when the full step overshoots (scores of large
    magnitude, nearly separated classes), where plain Newton can run off to
    huge coefficients.
    """
    m = Z.shape[1]
    p = np.empty(Z.shape[0])
    loss = loss_and_probability(Z @ beta, target, p)
    for _ in range(steps):
        hessian = weighted_gram(Z, Zt, p * (1.0 - p))
        for j in range(m):
            hessian[j, j] += 1e-12
        step = solve_spd(hessian, Zt @ (p - target))
        t, loss, found = halved_step(Z, target, beta, step, loss, p)
        if not found:
            break
        beta = beta - t * step
        if t * np.abs(step).max() <= tol * max(1.0, np.abs(beta).max()):
            break
    return beta


@njit(cache=True)
def platt_newton(u: np.ndarray, target: np.ndarray, a: float, b: float, steps: int, tol: float
                 ) -> tuple[float, float]:
    r"""Platt's :math:`(a, b)` on standardised scores ``u``: Newton on the log loss of :math:`\sigma(a u + b)`
    against ``target`` from ``(a, b)`` (:math:`10^{-10}` added to the Hessian's diagonal), at most ``steps`` steps,
    fewer once a step is at most ``tol`` relative to :math:`\max(1, |a|, |b|)`.

    A step whose log loss is higher is halved until it is not (Lin, Lin and
    Weng 2007; :func:`halved_step`), at most :data:`MAX_HALVINGS` times; when
    none lowers the loss the iteration stops. Undamped, the iteration ran off
    to :math:`|a| \approx 10^{10}` on small nearly separated samples (P = 0 on
    every row); where the full step lowers the loss it is taken as before.
    """
    n = u.size
    Z = np.empty((n, 2))  # [u, 1]: the design of the line search
    for i in range(n):
        Z[i, 0] = u[i]
        Z[i, 1] = 1.0
    p = np.empty(n)
    loss = loss_and_probability(Z @ np.array([a, b]), target, p)
    for _ in range(steps):
        g_a = g_b = h_aa = h_ab = h_bb = 0.0
        for i in range(n):
            w = p[i] * (1.0 - p[i])
            r = p[i] - target[i]
            g_a += r * u[i]
            g_b += r
            h_aa += w * u[i] * u[i]
            h_ab += w * u[i]
            h_bb += w
        h_aa += 1e-10
        h_bb += 1e-10
        det = h_aa * h_bb - h_ab * h_ab
        step_a, step_b = (h_bb * g_a - h_ab * g_b) / det, (h_aa * g_b - h_ab * g_a) / det
        t, loss, found = halved_step(Z, target, np.array([a, b]), np.array([step_a, step_b]), loss, p)
        if not found:
            break
        a, b = a - t * step_a, b - t * step_b
        if t * max(abs(step_a), abs(step_b)) <= tol * max(1.0, abs(a), abs(b)):
            break
    return a, b
