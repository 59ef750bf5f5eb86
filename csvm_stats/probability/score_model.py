r"""A probability model beside the CSVM rule: penalised logistic regression on the CSVM's feature map, recalibrated.

The rule's own decision function :math:`f` is a poor probability score on the
held-out route: it is trained on I alone (half the rows), at the user's C, and
bent by the rate requirement. This module fits separate scores in the same
space as the rule, :math:`\phi(s(x))` (the standardisation and kernel feature
map of the fit; :mod:`csvm_stats.optimization.kernels`):

1. **Score.** With :math:`Z` the first :data:`MAX_COMPONENTS` principal
   components of the centred :math:`\phi` on :math:`I \cup J \cup H` (all of
   them when there are fewer), the L2-penalised logistic regression

   .. math:: \hat\beta_\lambda = \arg\min_\beta \sum_i \bigl[\log(1 + e^{\eta_i}) - y_i \eta_i\bigr]
             + \tfrac{\lambda}{2}\|\beta_{1:}\|^2, \qquad \eta_i = \beta_0 + z_i^\top \beta_{1:},

   (intercept unpenalised; Newton's method, warm-started along a decreasing
   grid of :math:`\lambda`, :data:`PATH_STEPS` steps per value) is fitted for
   each :math:`\lambda` of :data:`PENALTY_GRID` times the trace of
   :math:`Z^\top Z` on :func:`fold_count` stratified folds of the rows
   (:data:`CV_FOLDS`, more below :data:`SMALL_SAMPLE_ROWS` rows),
   and the :math:`\lambda` of smallest out-of-fold log loss is kept; the
   score :math:`\eta` is then fitted on all the rows at that penalty, and each
   row's out-of-fold score :math:`\eta_{-i}` (from the fold model that did
   not see it) is kept for step 2. (An approximate leave-one-out criterion,
   Rad and Maleki 2020, was tried first: on nearly separable data such as
   Wisconsin it chose almost no penalty, and the Brier score was 1.6 times
   Platt's.) Using H here as well as :math:`I \cup J` lowered the Brier score
   on 7 of 8 data sets of ``benchmarks/probabilities.py`` (10 development
   splits, not the benchmark's), by up to 8%.

   For the RBF kernel this is kernel logistic regression on the leading
   eigen-directions of the Gram matrix of :math:`I \cup J`; for the linear
   kernel, ridge-penalised logistic regression on the standardised columns.
2. **Recalibration** (the point probability). The sigmoid
   :math:`P(y = 1 \mid x) = \sigma(a\,\eta(x) + b)` (Platt 1999, with Platt's
   smoothed targets :math:`(N_+ + 1)/(N_+ + 2)` and :math:`1/(N_- + 2)`), or,
   when Akaike's criterion prefers it, its beta-calibration extension
   :math:`\sigma(a\,\eta + k\,g(\eta) + b)` with the even
   :math:`g(\eta) = 2\log\cosh(\eta/2)` (an increasing map of
   :math:`\eta` all the same; :func:`fit_recalibration`), is fitted by maximum likelihood on the pairs
   :math:`(\eta_{-i}, y_i)`: every pair is a prediction for a point its score
   did not see. Its score equation for b makes the mean probability on these
   pairs equal to the mean smoothed target, which is the base rate up to
   :math:`O(1/n)`: no base-rate bias (the Venn-Abers merge
   :math:`p_1/(1 - p_0 + p_1)` over-predicts at low prevalence;
   :mod:`csvm_stats.probability.venn_abers`).
3. **Interval score.** The same penalised logistic regression on
   :math:`I \cup J` alone (its centring, principal directions, penalty scale
   and cross-validated penalty all from :math:`I \cup J`;
   :data:`INTERVAL_PATH_STEPS` Newton step per value along the path) gives
   :math:`\eta_{IJ}`: the mean of the coefficients of the fold models at the
   chosen penalty (a bagged score, not refitted on all of :math:`I \cup J`:
   the refit cost a quarter of the model's time and left the interval's width
   unchanged on development splits). It reads nothing of H, neither labels
   nor features.

The validity statement is the inductive Venn-Abers interval of
:math:`\eta_{IJ}` calibrated on H alone
(:class:`~csvm_stats.probability.venn_abers.VennAbers`): H's labels were used
neither by :math:`\eta_{IJ}` nor by the rule's direction, so one of
:math:`p_0, p_1` is a calibrated probability in Venn's sense. The point
probability P is not forced inside :math:`[p_0, p_1]` (forcing it added error
and base-rate bias in ``benchmarks/probabilities.py``); how often it lies
outside is reported there.

Cost: a few Newton steps per grid value (two cross-validations: steps 1 and
3) on at most :data:`MAX_COMPONENTS` columns (the leading kernel eigen-directions, or for a linear map with more
columns, its leading principal components), with one BLAS thread
(:func:`csvm_stats.optimization.blas.one_blas_thread`: spinning BLAS threads
cost more CPU than these small products). The Newton iterations, the folds'
penalty paths and Platt's fit run compiled
(:mod:`csvm_stats.probability.logistic_kernels`, numba, cached on disk).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from csvm_stats.exceptions import DataError
from csvm_stats.optimization.blas import one_blas_thread
from csvm_stats.probability import logistic_kernels

#: Largest number of principal components of phi used by the score.
MAX_COMPONENTS = 64
#: Penalties, relative to the trace of Z'Z, tried from the largest down (warm starts).
PENALTY_GRID = tuple(10.0 ** -k for k in (2.0, 3.0, 4.0, 5.0))
NEWTON_STEPS = 30
#: Newton steps per penalty along the path (warm-started; the chosen penalty is then solved to convergence).
PATH_STEPS = 2
#: Newton steps per penalty along the path of the interval score's cross-validation (step 3; it does not move P).
INTERVAL_PATH_STEPS = 1
#: Folds of the cross-validation that chooses the penalty (and gives the out-of-fold scores), from
#: SMALL_SAMPLE_ROWS rows on; the fewest folds any cross-fit uses.
CV_FOLDS = 2
#: Below this many rows the cross-validation uses SMALL_SAMPLE_FOLDS folds (:func:`fold_count`).
SMALL_SAMPLE_ROWS = 200
SMALL_SAMPLE_FOLDS = 5
NEWTON_TOL = 1e-6
#: Fewest scores on each side of 0 for the beta-calibration extension (each side has its own tail slope).
MIN_SIDE = 10
#: The extension is fitted only when the score statistic of k = 0 at Platt's fit exceeds this (:func:`fit_recalibration`).
SCORE_SCREEN = 1.0
#: Scores whose spread is at most this (relative) count as constant.
CONSTANT_TOL = 1e-12


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + e^{-z}), computed as (1 + tanh(z/2))/2 (no overflow)."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass(frozen=True)
class ProbabilityModel:
    r"""A fitted probability model: :math:`P = \sigma(a\,\eta + k\,g(\eta) + b)`, :math:`\eta = \phi^\top v + c`
    (module docstring; :func:`fit_recalibration`).

    ``coef`` (v) has one entry per feature-map column, ``intercept`` is c,
    ``slope``, ``curvature`` and ``offset`` are a, k and b (k = 0: Platt's
    sigmoid, as in model files written before k existed); ``penalty`` the chosen
    :math:`\lambda` (absolute), ``n`` the rows of the score fit.
    ``interval_coef`` and ``interval_intercept`` give the score
    :math:`\eta_{IJ}` fitted on :math:`I \cup J` alone, the one the Venn-Abers
    interval calibrates on H (None: the same as :math:`\eta`, as in model
    files written before the two scores were separated).
    """

    coef: np.ndarray
    intercept: float
    slope: float
    offset: float
    penalty: float = 0.0
    n: int = 0
    interval_coef: np.ndarray | None = None
    interval_intercept: float | None = None
    curvature: float = 0.0

    def score(self, features: np.ndarray) -> np.ndarray:
        """The linear predictor :math:`\\eta(x)` of feature-map rows (the score P is a sigmoid of)."""
        return np.asarray(features, dtype=float) @ self.coef + self.intercept

    def interval_score(self, features: np.ndarray) -> np.ndarray:
        """The score :math:`\\eta_{IJ}(x)` that the Venn-Abers interval calibrates (fitted without H)."""
        if self.interval_coef is None:
            return self.score(features)
        return np.asarray(features, dtype=float) @ self.interval_coef + self.interval_intercept

    def probability(self, score: np.ndarray) -> np.ndarray:
        """The recalibrated probability :math:`\\sigma(a\\,\\eta + k\\,g(\\eta) + b)` of scores :math:`\\eta`
        (:func:`recalibration_logit`; k = 0 is Platt's sigmoid)."""
        return sigmoid(recalibration_logit(score, self.slope, self.curvature, self.offset))

    def predict(self, features: np.ndarray) -> np.ndarray:
        """P(y = 1 | x) of feature-map rows."""
        return self.probability(self.score(features))


def _newton_logistic(Z: np.ndarray, Zt: np.ndarray, y: np.ndarray, lam: float, beta: np.ndarray,
                     steps: int = NEWTON_STEPS) -> np.ndarray:
    """Penalised logistic regression by Newton's method from ``beta`` (``Zt``: ``Z`` transposed, C-contiguous).

    At most ``steps`` steps, fewer once a step is below :data:`NEWTON_TOL`
    (relative); the step is :func:`csvm_stats.probability.logistic_kernels.newton_logistic`'s.
    """
    return logistic_kernels.newton_logistic(Z, Zt, y, float(lam), beta, steps, NEWTON_TOL)


def fold_count(y01: np.ndarray) -> int:
    """The folds of the cross-validation of labels ``y01``: :data:`CV_FOLDS`, or :data:`SMALL_SAMPLE_FOLDS`
    below :data:`SMALL_SAMPLE_ROWS` rows; never more than the smaller class has points (and at least 2).

    Why more folds on small samples: a fold model of 2-fold cross-validation
    sees half the rows, and on a few dozen rows (SRBCT's 66 training rows,
    leukemia's 57, each with thousands of genes) its out-of-fold scores were
    too weak for the sigmoid fitted on them: 5 folds lowered the Brier score
    on SRBCT from 0.0304 to 0.0262 on 10 development splits (lower on 8 of
    them; ``StratifiedShuffleSplit(10, test_size=0.2, random_state=101)``,
    default path; on leukemia only from 0.0555 to 0.0541, lower on 5 of
    10), and on the evaluation splits of
    ``benchmarks/probabilities.py`` from 0.0256 to 0.0126 (SRBCT) and from
    0.0219 to 0.0180 (leukemia), where the change was first seen. From
    SMALL_SAMPLE_ROWS rows on, 2 folds keep the probability model within 10%
    of a default fit's CPU (Wisconsin); below it 5 folds cost 0.4 CPU-ms more
    per score fit at 199 x 30 and 23 CPU-ms more at 66 x 2308 (0.81 against
    0.40 and 59 against 36 ms, side by side, machine under load).
    """
    y01 = np.asarray(y01)
    folds = SMALL_SAMPLE_FOLDS if y01.size < SMALL_SAMPLE_ROWS else CV_FOLDS
    return int(min(folds, max(2, min(np.sum(y01 > 0), np.sum(y01 <= 0)))))


def _folds(y01: np.ndarray) -> list[np.ndarray]:
    """:func:`fold_count` stratified folds of the rows (fixed: the same data give the same folds)."""
    order = np.argsort(y01, kind="stable")  # classes in turn, rows in their order within a class
    k = fold_count(y01)
    return [np.sort(order[j::k]) for j in range(k)]


@dataclass(frozen=True)
class _Design:
    """The score's design: centred feature-map rows in at most :data:`MAX_COMPONENTS` principal directions."""

    mean: np.ndarray
    basis: np.ndarray | None  # None: the columns as they are (or their leading MAX_COMPONENTS when ``ordered``)
    ordered: bool

    @classmethod
    def of(cls, X: np.ndarray, ordered: bool) -> _Design:
        mean = X.mean(axis=0)
        basis = None
        if X.shape[1] > MAX_COMPONENTS and not ordered:
            centred = X - mean
            if X.shape[0] < X.shape[1]:  # wide (genes): the right singular vectors, O(n^2 p) instead of O(p^3)
                _, _, vt = np.linalg.svd(centred, full_matrices=False)  # decreasing singular values
                basis = vt[:MAX_COMPONENTS].T
            else:
                _, eigvec = np.linalg.eigh(centred.T @ centred)  # ascending
                basis = eigvec[:, ::-1][:, :MAX_COMPONENTS]  # the leading principal directions
        return cls(mean, basis, ordered)

    def matrix(self, X: np.ndarray) -> np.ndarray:
        """``[1, Z]``: the intercept column and the centred rows in the design's directions."""
        centred = X - self.mean
        Zc = centred @ self.basis if self.basis is not None else centred[:, :MAX_COMPONENTS]
        return np.column_stack([np.ones(X.shape[0]), Zc])

    def coefficients(self, beta: np.ndarray, r: int | None = None) -> tuple[np.ndarray, float]:
        """``(v, c)`` with :math:`\\phi^\\top v + c` equal to the linear predictor :math:`\\beta^\\top [1, z]`.

        ``r``: the columns of :math:`\\phi` (more than the design's when its
        trailing columns were dropped before; their coefficients are 0).
        """
        m = self.mean.size
        v = np.zeros(m if r is None else r)
        if self.basis is not None:
            v[:m] = self.basis @ beta[1:]
        else:
            v[: beta.size - 1] = beta[1:]
        return v, float(beta[0] - self.mean @ v[:m])


def _is_constant(X: np.ndarray) -> bool:
    return X.shape[1] == 0 or not np.any(
        np.abs(X - X.mean(axis=0)) > CONSTANT_TOL * max(1.0, float(np.max(np.abs(X)))))


def _base_logit(y01: np.ndarray) -> float:
    rate = (y01.sum() + 0.5) / (y01.size + 1.0)
    return float(np.log(rate / (1.0 - rate)))


def _trace(Z: np.ndarray) -> float:
    """The trace of :math:`Z^\\top Z` over the non-intercept columns (the scale of the penalty)."""
    return float(np.sum(Z[:, 1:] * Z[:, 1:]))


def _cross_validated(Z: np.ndarray, y01: np.ndarray, path_steps: int = PATH_STEPS
                     ) -> tuple[np.ndarray, int, np.ndarray]:
    """Step 1's penalty choice on the design ``Z``: ``(start, g, out_of_fold)``.

    ``g`` indexes :data:`PENALTY_GRID`; ``start`` is the mean of the fold
    models at that penalty (a warm start), ``out_of_fold`` their scores of the
    rows they did not see. Each fold follows the penalty path from the
    largest value down, ``path_steps`` Newton steps per value.
    """
    y01 = np.asarray(y01, dtype=float)
    fold = np.empty(y01.size, dtype=np.int64)
    folds = _folds(y01)
    for j, test in enumerate(folds):
        fold[test] = j
    penalties = np.array(PENALTY_GRID) * _trace(Z)
    fold_betas, out_of_fold = logistic_kernels.penalty_paths(
        Z, y01, fold, len(folds), penalties, _base_logit(y01), path_steps, NEWTON_TOL)
    losses = np.mean(np.logaddexp(0.0, out_of_fold) - y01 * out_of_fold, axis=1)
    g = int(np.argmin(losses))
    return fold_betas[:, g].mean(axis=0), g, out_of_fold[g]


def fit_score(features: np.ndarray, y01: np.ndarray, *, ordered: bool = False
              ) -> tuple[np.ndarray, float, float, np.ndarray]:
    """Step 1 of the module docstring: ``(coef, intercept, penalty, out_of_fold_scores)`` on feature-map rows.

    ``ordered``: the columns are already principal directions in decreasing
    order of variance (a factorised kernel map, :func:`csvm_stats.optimization.kernels.factorise`),
    so the leading :data:`MAX_COMPONENTS` columns stand for the principal
    components and no eigen-decomposition is needed.

    A constant feature map (no spread) gives the zero score (``coef`` 0,
    ``intercept`` the logit of the base rate) and out-of-fold scores equal to it.
    """
    X = np.asarray(features, dtype=float)
    if _is_constant(X):
        base = _base_logit(y01)
        return np.zeros(X.shape[1]), base, 0.0, np.full(X.shape[0], base)
    design = _Design.of(X, ordered)
    Z = design.matrix(X)
    start, g, out_of_fold = _cross_validated(Z, y01)
    lam = PENALTY_GRID[g] * _trace(Z)
    y = np.asarray(y01, dtype=float)
    v, c = design.coefficients(_newton_logistic(Z, np.ascontiguousarray(Z.T), y, lam, start))
    return v, c, lam, out_of_fold


def fit_sigmoid(scores: np.ndarray, y01: np.ndarray) -> tuple[float, float]:
    """Step 2 of the module docstring: Platt's (a, b) on score/label pairs (Newton, smoothed targets).

    Constant scores give a = 0 and b the logit of the smoothed base rate.
    """
    s = np.asarray(scores, dtype=float)
    target = _smoothed_targets(y01)
    base = float(np.log(target.mean() / (1.0 - target.mean())))
    spread = float(np.ptp(s)) if s.size else 0.0
    if spread <= CONSTANT_TOL * max(1.0, float(np.max(np.abs(s)))):
        return 0.0, base
    centre, scale = float(s.mean()), float(s.std())
    u = (s - centre) / scale
    a_u, b_u = logistic_kernels.platt_newton(u, target, 1.0, base, NEWTON_STEPS, NEWTON_TOL)
    a = a_u / scale
    return float(a), float(b_u - a * centre)


def bowl(score: np.ndarray) -> np.ndarray:
    r""":math:`g(\eta) = 2\log\cosh(\eta/2) = \operatorname{sp}(\eta) + \operatorname{sp}(-\eta) - 2\log 2`
    (:math:`\operatorname{sp}(t) = \log(1 + e^t)`): even, :math:`g(0) = 0`, :math:`g'(\eta) = \tanh(\eta/2)`."""
    t = np.abs(np.asarray(score, dtype=float))
    return t + 2.0 * np.log1p(np.exp(-t)) - 2.0 * np.log(2.0)


def recalibration_logit(score: np.ndarray, slope: float, curvature: float, offset: float) -> np.ndarray:
    r"""The logit :math:`a\,\eta + k\,g(\eta) + b` of the recalibrated probability (:func:`fit_recalibration`)."""
    eta = np.asarray(score, dtype=float)
    logit = slope * eta + offset
    return logit + curvature * bowl(eta) if curvature else logit


def _log_loss(logit: np.ndarray, target: np.ndarray) -> float:
    return float(np.sum(np.logaddexp(0.0, logit) - target * logit))


def _smoothed_targets(y01: np.ndarray) -> np.ndarray:
    """Platt's targets :math:`(N_+ + 1)/(N_+ + 2)` for positives and :math:`1/(N_- + 2)` for negatives."""
    n_pos = float(np.sum(y01 > 0))
    n_neg = float(y01.size - n_pos)
    return np.where(y01 > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def _logistic_fit(columns: list[np.ndarray], target: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    r"""Unpenalised logistic regression of ``target`` on an intercept and ``columns`` (each scaled to unit
    spread for the Newton steps, the coefficients returned on the original scale; intercept first).

    None when a column is constant (its coefficient is not identified, e.g.
    :math:`\eta - g(\eta)` when every score is far above 0) or the fit is not finite.
    """
    spreads = [float(np.std(c)) for c in columns]
    if any(sd <= CONSTANT_TOL * max(1.0, float(np.max(np.abs(c)))) for sd, c in zip(spreads, columns)):
        return None
    scales = np.array([1.0, *spreads])
    Z = np.column_stack([np.ones(target.size), *columns]) / scales
    beta = logistic_kernels.damped_newton_logistic(Z, np.ascontiguousarray(Z.T), target, start * scales,
                                                   NEWTON_STEPS, NEWTON_TOL)
    return beta / scales if np.all(np.isfinite(beta)) else None


def _score_statistic(s: np.ndarray, g: np.ndarray, target: np.ndarray, a: float, b: float) -> float:
    r"""The score (Lagrange multiplier) statistic of k = 0 at Platt's fit :math:`(a, b)`.

    :math:`U^2 / I_{k \cdot ab}` with :math:`U = \sum_i g(\eta_i)(p_i - t_i)` the
    derivative of the log loss in k and :math:`I_{k \cdot ab}` the information
    for k left after (b, a) (the Schur complement of the Fisher information of
    :math:`(1, \eta, g)`, weights :math:`p_i(1 - p_i)`).
    """
    p = sigmoid(a * s + b)
    w = p * (1.0 - p)
    F = np.column_stack([np.ones(s.size), s, g])
    info = (F * w[:, None]).T @ F
    try:
        rest = info[2, 2] - info[2, :2] @ np.linalg.solve(info[:2, :2], info[:2, 2])
    except np.linalg.LinAlgError:
        return float("inf")
    score = float(g @ (p - target))
    return score * score / rest if rest > 0 else float("inf")


def fit_recalibration(scores: np.ndarray, y01: np.ndarray) -> tuple[float, float, float]:
    r"""Step 2 of the module docstring: ``(a, k, b)`` of :math:`P = \sigma(a\,\eta + k\,g(\eta) + b)` on pairs.

    Platt's sigmoid (k = 0, :func:`fit_sigmoid`) or, when Akaike's criterion
    prefers it, its one-parameter extension by the even function
    :func:`bowl` :math:`g`: beta calibration (Kull, Silva Filho and Flach
    2017) of :math:`s = \sigma(\eta)`, whose logit
    :math:`c_1 \log s - c_0 \log(1 - s) + c` is
    :math:`a\,\eta + k\,g(\eta) + b` with :math:`a = (c_0 + c_1)/2`,
    :math:`k = (c_0 - c_1)/2` (up to the constant). It lets the two tails of
    the score have their own slopes (:math:`a - k` on the negative side,
    :math:`a + k` on the positive). Both are fitted by maximum likelihood
    against Platt's smoothed targets; the extension is kept when its log
    likelihood is higher by more than 1 (Akaike's criterion for one more
    parameter), and only as an increasing map of :math:`\eta`
    (:math:`|k| \le a`: the derivative is :math:`a + k \tanh(\eta/2)`); when
    the unconstrained optimum breaks that, the constrained optimum lies on a
    face :math:`k = \pm a` and both faces are fitted (as when :math:`g` and
    :math:`\eta` are collinear, every score far to one side of 0; a face whose
    column is constant there is skipped). It is considered only when at least
    :data:`MIN_SIDE` scores lie on each side of 0: a tail's slope fitted to
    fewer extrapolates wildly (in review, scores all near 11 gave a = 7329, k = -7328).
    And it is fitted only when the score statistic of k = 0 at Platt's fit
    (:func:`_score_statistic`, asymptotically the likelihood-ratio statistic
    2 x gain that Akaike's rule compares with 2) exceeds
    :data:`SCORE_SCREEN` = 1: in 3,000 simulated pair sets (n = 40 to 1,500;
    normal, t(3), bimodal and two-sided exponential scores; true k zero or
    not) the extension was kept 867 times, never with a score statistic
    below 1.70, so the screen skipped only fits that would have been
    rejected there, and it saves most of the recalibration's cost when the
    extension is not kept (0.77 of 3.0 CPU-ms of a Wisconsin probability
    model before it).

    Why: on development splits of the 11 data sets of
    ``benchmarks/probabilities.py`` (``StratifiedShuffleSplit(10,
    test_size=0.2, random_state=101)``, default formula path, linear kernel;
    both recalibrations fitted to the same pairs by an exact optimiser,
    scipy's L-BFGS-B with :math:`c_0, c_1 \ge 0`) the criterion chose the
    extension on all 10 splits of banknote (mean Brier
    score 0.00817 -> 0.00781, -4.4%) and of churn (-0.4%), on a few splits of
    german, australian, votes, cervical and car, and never on wisconsin,
    heart, srbct or leukemia; the mean Brier score moved by -4.4% to +0.5%
    (australian). Always using the extension raised it on five data sets by
    0.5% to 1.9% (wisconsin, australian, heart, votes, leukemia) although it
    lowered srbct's by 10%.
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(y01, dtype=float)
    a, b = fit_sigmoid(s, y)
    if not a > 0:  # a score that does not rank (or is constant): Platt's sigmoid, nothing to bend
        return a, 0.0, b
    if min(np.sum(s < 0), np.sum(s > 0)) < MIN_SIDE:  # a tail slope with too few scores behind it
        return a, 0.0, b
    target = _smoothed_targets(y)
    g = bowl(s)
    if _score_statistic(s, g, target, a, b) <= SCORE_SCREEN:  # the extension's fit would not be kept
        return a, 0.0, b
    platt_loss = _log_loss(a * s + b, target)
    candidates = []
    full = _logistic_fit([s, g], target, np.array([b, a, 0.0]))
    if full is not None and abs(full[2]) <= full[1]:
        candidates.append((full[1], full[2], full[0]))
    else:  # the optimum breaks |k| <= a, or s and g are collinear: the two faces (each checks its column)
        for side in (1.0, -1.0):  # the faces k = +a and k = -a: one column s + side * g
            face = _logistic_fit([s + side * g], target, np.array([b, a]))
            if face is not None and face[1] > 0:
                candidates.append((face[1], side * face[1], face[0]))
    best = (a, 0.0, b)
    best_loss = platt_loss - 1.0  # Akaike: one more parameter must gain more than 1 in log likelihood
    for cand in candidates:
        loss = _log_loss(recalibration_logit(s, *cand), target)
        if np.isfinite(loss) and loss < best_loss:
            best, best_loss = cand, loss
    return tuple(float(v) for v in best)


@one_blas_thread
def fit_probability_model(
    features: np.ndarray, y01: np.ndarray, holdout_features: np.ndarray, holdout_y01: np.ndarray,
    *, ordered: bool = False,
) -> tuple[ProbabilityModel, np.ndarray]:
    """The probability model of the module docstring and the interval scores :math:`\\eta_{IJ}` of the held-out rows.

    ``features``/``y01``: feature-map rows and 0/1 labels of I u J;
    ``holdout_*``: those of H; ``ordered`` as in :func:`fit_score`. The point
    score :math:`\\eta` and its sigmoid use all these rows (steps 1 and 2);
    the interval score :math:`\\eta_{IJ}`, its design and its penalty use
    I u J alone (step 3), so nothing of H reaches it.
    """
    y = np.asarray(y01, dtype=float)
    if y.size < 2 or y.min() == y.max():
        raise DataError(
            f"the probability model needs both classes among the training and anchor rows; got {y.size} rows "
            f"with {int(y.sum())} positive."
        )
    X, X_h = np.asarray(features, dtype=float), np.asarray(holdout_features, dtype=float)
    r = X.shape[1]
    if ordered:  # only the leading directions enter the design: skip copying the others
        X, X_h = X[:, :MAX_COMPONENTS], X_h[:, :MAX_COMPONENTS]
    X_all = np.vstack([X, X_h])
    y_all = np.r_[y, np.asarray(holdout_y01, dtype=float)]
    if _is_constant(X_all):
        base = _base_logit(y_all)
        a, b = fit_sigmoid(np.full(y_all.size, base), y_all)
        model = ProbabilityModel(np.zeros(r), base, a, b, 0.0, int(y_all.size), np.zeros(r), _base_logit(y))
        return model, np.full(y_all.size - y.size, _base_logit(y))
    design = _Design.of(X_all, ordered)
    Z = design.matrix(X_all)
    start, g, out_of_fold = _cross_validated(Z, y_all)
    lam = PENALTY_GRID[g] * _trace(Z)
    beta = _newton_logistic(Z, np.ascontiguousarray(Z.T), y_all, lam, start)
    a, k, b = fit_recalibration(out_of_fold, y_all)
    design_ij = _Design.of(X, ordered)  # centring, directions and penalty scale from I u J too: nothing of H
    Z_ij = design_ij.matrix(X)
    beta_ij, _, _ = _cross_validated(Z_ij, y, INTERVAL_PATH_STEPS)  # the mean of the fold models: no refit
    v, c = design.coefficients(beta, r)
    v_ij, c_ij = design_ij.coefficients(beta_ij, r)
    return ProbabilityModel(v, c, a, b, lam, int(y_all.size), v_ij, c_ij, k), design_ij.matrix(X_h) @ beta_ij
