r"""The CSVM as one solver-neutral mixed-integer quadratic program.

:class:`MIQP` is the canonical description every backend translates:

.. math::

    \min_x\; x^\top Q x + c^\top x \quad\text{s.t.}\quad
    \ell \le A x \le u,\; x_{lo} \le x \le x_{hi},\; x_k \in \{0, 1\}\ (k \in B),
    \; z_k = 1 \Rightarrow a_k^\top x \ge r_k \ (\text{indicators}).

:func:`build_primal` writes the CSVM of ``NOTES.md`` section 1 on feature rows
:math:`\phi(x)` (the original columns for the linear kernel):

.. math::

    \min\; w^\top w + C \sum_{i \in I} s_i \xi_i \quad\text{s.t.}\quad
    y_i(w^\top \phi_i + b) \ge 1 - \xi_i,\ \xi_i \ge 0 \ (i \in I);\quad
    y_j(w^\top \phi_j + b) \ge 1 - M_j (1 - z_j) \ (j \in J);\quad
    \sum_{j \in J_c} z_j \ge k_c \ (c \in \{\mathrm{tpr}, \mathrm{tnr}, \mathrm{acc}\}).

Valid tightening. Given the objective U of a feasible point (the warm
start), :mod:`csvm_stats.optimization.tightening` bounds w, b, xi and every anchor margin
over all solutions at least as good. The big-M constant becomes
:math:`M_j = \min(M, M^*_j)` with the proven :math:`M^*_j = 1 - \ell_j`, and
anchor points whose margin constraint always (never) holds get
:math:`z_j = 1` (:math:`z_j = 0`) fixed; this removes no solution that the
user's M admits and that could be optimal. With ``big_m=None`` the exact
model is meant: the proven :math:`M^*_j` is used where it exists, indicator
constraints otherwise.

:func:`build_partial_dual` writes the paper's kernel formulation (its
problem (CSVM)) for reference and tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from csvm_stats.optimization.tightening import SVMReference, primal_bounds

RATE_KINDS: tuple[str, ...] = ("tpr", "tnr", "acc")
RATE_NAMES = {"tpr": "true positive rate", "tnr": "true negative rate", "acc": "accuracy"}


@dataclass(frozen=True)
class Indicators:
    """Indicator constraints ``x[binary[k]] = 1  =>  A[k] @ x >= rhs[k]``."""

    binary: np.ndarray
    A: sp.csr_matrix
    rhs: np.ndarray


@dataclass(frozen=True)
class CSVMData:
    r"""The data of an exact primal CSVM, for backends that exploit its structure (``"bnb"``).

    Feature rows and labels of I and J, C, the training weights and the rate
    requirements; the binaries' bounds in the MIQP carry the proven fixings.
    Attached by :func:`build_primal` only when the model is exact.
    """

    phi_train: np.ndarray
    y_train: np.ndarray
    phi_anchor: np.ndarray
    y_anchor: np.ndarray
    C: float
    weight: np.ndarray
    requirements: tuple[RateRequirement, ...]


@dataclass(frozen=True)
class MulticlassData:
    r"""The data of an exact multiclass CSVM (:mod:`csvm_stats.multiclass.problem`), for ``"bnb"``.

    Feature rows and class positions of I and of the constrained anchor points
    (in the order of the z block), the number of classes, C, the training
    weights, the required count per class position and the factor s of the w
    block (which holds :math:`sW`). Attached only when the model is exact.
    """

    phi_train: np.ndarray
    y_train: np.ndarray
    phi_anchor: np.ndarray
    y_anchor: np.ndarray
    n_classes: int
    C: float
    weight: np.ndarray
    min_counts: Mapping[int, int]
    scale: float


@dataclass(frozen=True)
class CardinalityData:
    """An exact primal CSVM (:class:`CSVMData`, columns = the candidate features) under a budget of at most
    ``max_features`` non-zero coefficients: what ``"bnb"`` needs to search over features too
    (:mod:`csvm_stats.optimization.solvers.bnb_sparse`). Attached by :func:`with_cardinality`."""

    csvm: CSVMData
    max_features: int


@dataclass(frozen=True)
class MIQP:
    r"""A mixed-integer program with a convex quadratic objective (see module docstring).

    ``Q`` is symmetric positive semi-definite; ``blocks`` names variable ranges
    (e.g. ``w``, ``b``, ``xi``, ``z``) so that results can be read back;
    ``start`` is an optional feasible point passed to the solver as MIP start.
    ``tangent_points`` are points (values of the variables) at which a backend
    that keeps a separable quadratic by epigraphs adds the tangent cuts
    :math:`t_k \ge 2 a_k x_k - a_k^2` from the start: at the plain SVM's
    solution they lift the first LP bound to about the SVM's optimum (the
    linearisation of a convex objective at its minimiser has the same minimum).

    ``perspective`` (optional, integer array of shape (m, 2)) lists pairs
    :math:`(k, v)` of a variable with a quadratic term and a binary such that
    the rows force :math:`x_k = 0` whenever :math:`x_v = 0` (the feature
    indicators of :func:`with_cardinality`). A backend may then replace the
    epigraph :math:`t_k \ge x_k^2` by its perspective
    :math:`t_k x_v \ge x_k^2` (a rotated second-order cone; as cuts,
    :math:`t_k \ge 2 a x_k - a^2 x_v` for every a): it has the same integer
    points and its relaxation is the convex hull of the on/off set
    (Frangioni and Gentile 2006; Guenluek and Linderoth 2010), far tighter
    than the big-M rows alone. Backends that ignore it solve the same model.
    ``multiclass`` (like ``csvm``) carries the structure of an exact multiclass CSVM; ``l1`` the data of an
    exact L1-norm CSVM (:func:`build_l1_primal`), for ``"bnb"``'s search on the MILP
    (:mod:`csvm_stats.optimization.solvers.bnb_l1`).
    """

    Q: sp.csr_matrix
    c: np.ndarray
    A: sp.csr_matrix
    row_lo: np.ndarray
    row_hi: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    binary: np.ndarray
    blocks: Mapping[str, slice]
    indicators: Indicators | None = None
    start: np.ndarray | None = field(default=None, repr=False)
    tangent_points: tuple[np.ndarray, ...] = field(default=(), repr=False)
    csvm: CSVMData | None = field(default=None, repr=False)
    perspective: np.ndarray | None = field(default=None, repr=False)
    multiclass: MulticlassData | None = field(default=None, repr=False)
    cardinality: CardinalityData | None = field(default=None, repr=False)
    l1: CSVMData | None = field(default=None, repr=False)

    @property
    def n_vars(self) -> int:
        return self.c.shape[0]

    @property
    def n_rows(self) -> int:
        return self.A.shape[0] + (0 if self.indicators is None else self.indicators.A.shape[0])

    @property
    def separable(self) -> bool:
        """True when Q is diagonal (the primal CSVM: Q = I on w)."""
        Q = self.Q.tocoo()
        return bool(np.all(Q.row == Q.col))

    def objective(self, x: np.ndarray) -> float:
        return float(x @ (self.Q @ x) + self.c @ x)

    def max_violation(self, x: np.ndarray) -> float:
        """Largest violation of rows, bounds and integrality at ``x`` (0 when feasible)."""
        ax = self.A @ x
        v = [np.max(self.row_lo - ax, initial=0.0), np.max(ax - self.row_hi, initial=0.0)]
        v += [np.max(self.lb - x, initial=0.0), np.max(x - self.ub, initial=0.0)]
        if self.binary.size:
            xb = x[self.binary]
            v.append(np.max(np.minimum(np.abs(xb), np.abs(xb - 1)), initial=0.0))
        if self.indicators is not None:
            on = x[self.indicators.binary] > 0.5
            gap = self.indicators.rhs - self.indicators.A @ x
            v.append(np.max(gap[on], initial=0.0))
        return float(max(v))


@dataclass(frozen=True)
class RateRequirement:
    """Anchor points of ``members`` of which at least ``count`` must have margin >= 1."""

    kind: str
    count: int
    members: np.ndarray


def rate_requirements(y_anchor: np.ndarray, min_counts: Mapping[str, int]) -> list[RateRequirement]:
    """Turn ``{"tpr": k, ...}`` into index sets of the anchor sample (validated elsewhere)."""
    members = {
        "tpr": np.flatnonzero(y_anchor > 0),
        "tnr": np.flatnonzero(y_anchor < 0),
        "acc": np.arange(y_anchor.shape[0]),
    }
    return [RateRequirement(kind, int(min_counts[kind]), members[kind]) for kind in RATE_KINDS if kind in min_counts]


def constrained_anchor_points(requirements: list[RateRequirement], n_anchor: int) -> np.ndarray:
    """Sorted indices of the anchor points that at least one requirement counts.

    The others carry no constraint: with :math:`z_j = 0` their margin row is
    void in the exact model, so they can leave it without changing the optimum.
    Every requirement's members are a whole class or all points, so the kept
    points give the same requirements again (:func:`rate_requirements`).
    """
    if not requirements:
        return np.empty(0, dtype=int)
    return np.unique(np.concatenate([req.members for req in requirements])).astype(int)


def anchor_indicators(margins: np.ndarray, kept: np.ndarray, z_model: np.ndarray) -> np.ndarray:
    r"""z for every anchor point from a solution of the model that kept only ``kept``
    (:func:`constrained_anchor_points`): the model's rounded z there, and elsewhere 1 where the
    point meets its margin (``margins`` = :math:`y_j f(x_j) \ge 1`, to 1e-9), else 0."""
    z = (margins >= 1.0 - 1e-9).astype(float)
    z[kept] = np.round(z_model)
    return z


def _count_rows(requirements: list[RateRequirement], z_start: int, n: int) -> sp.csr_matrix:
    """One row per requirement: the sum of its members' z."""
    rows = sp.lil_matrix((len(requirements), n))
    for r, req in enumerate(requirements):
        rows[r, z_start + req.members] = 1.0
    return rows.tocsr()


@dataclass(frozen=True)
class CSVMProblem:
    """The primal CSVM: its MIQP plus what is needed to read a solution back."""

    miqp: MIQP
    big_m: np.ndarray
    exact: bool


def build_primal(
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    *,
    C: float,
    min_counts: Mapping[str, int],
    big_m: float | None,
    sample_weight: np.ndarray,
    start: np.ndarray | None = None,
    upper: float | None = None,
    reference: SVMReference | None = None,
) -> CSVMProblem:
    """Primal CSVM on feature rows; variables ordered ``[w, b, xi, z]``.

    ``upper`` (the objective of ``start``) enables the valid tightening of the
    module docstring, made much stronger by ``reference``, the plain SVM on I.
    Anchor points whose M_j is infinite get indicator constraints. The result's
    ``exact`` is True when the model is the CSVM itself: ``big_m=None``, or a
    user's M at least the proven bound of every anchor point.
    """
    n_i, p = phi_train.shape
    n_j = phi_anchor.shape[0]
    blocks = {
        "w": slice(0, p),
        "b": slice(p, p + 1),
        "xi": slice(p + 1, p + 1 + n_i),
        "z": slice(p + 1 + n_i, p + 1 + n_i + n_j),
    }
    n = p + 1 + n_i + n_j
    Q = sp.diags(np.r_[np.ones(p), np.zeros(n - p)]).tocsr()
    c = np.zeros(n)
    c[blocks["xi"]] = C * sample_weight

    lb = np.r_[np.full(p, -np.inf), -np.inf, np.zeros(n_i), np.zeros(n_j)]
    ub = np.r_[np.full(p, np.inf), np.inf, np.full(n_i, np.inf), np.ones(n_j)]
    bounds = None
    proven = np.full(n_j, np.inf)
    if upper is not None and np.isfinite(upper):
        bounds = primal_bounds(upper, phi_train, y_train, phi_anchor, y_anchor, C, sample_weight, reference)
        lb[blocks["w"]], ub[blocks["w"]] = bounds.w_lo, bounds.w_hi
        lb[p], ub[p] = bounds.b_lo, bounds.b_hi
        ub[blocks["xi"]] = bounds.xi_hi
        z = blocks["z"].start + np.arange(n_j)
        lb[z[bounds.anchor_lo >= 1.0]] = 1.0  # the margin constraint always holds
        ub[z[bounds.anchor_hi < 1.0]] = 0.0  # it never holds
        proven = np.maximum(1.0 - bounds.anchor_lo, 0.0)
    m_j = proven if big_m is None else np.minimum(float(big_m), proven)
    # the user's M keeps the model exact only where it is at least the proven bound
    exact = big_m is None or bool(np.all(float(big_m) >= proven))
    use_big_m = np.isfinite(m_j)

    # training rows: y_i phi_i w + y_i b + xi_i >= 1
    train_rows = sp.hstack(
        [sp.csr_matrix(phi_train * y_train[:, None]), sp.csr_matrix(y_train[:, None]), sp.identity(n_i), sp.csr_matrix((n_i, n_j))]
    )
    # anchor rows: y_j phi_j w + y_j b - M_j z_j >= 1 - M_j
    anchor_core = sp.hstack(
        [sp.csr_matrix(phi_anchor * y_anchor[:, None]), sp.csr_matrix(y_anchor[:, None]), sp.csr_matrix((n_j, n_i))]
    ).tocsr()
    big_m_rows = sp.hstack([anchor_core, sp.diags(-np.where(use_big_m, m_j, 0.0))]).tocsr()[use_big_m]
    requirements = rate_requirements(y_anchor, min_counts)
    A = sp.vstack([train_rows, big_m_rows, _count_rows(requirements, blocks["z"].start, n)]).tocsr()
    row_lo = np.r_[np.ones(n_i), 1.0 - m_j[use_big_m], [req.count for req in requirements]]
    row_hi = np.full(A.shape[0], np.inf)

    indicators = None
    if not use_big_m.all():
        free = np.flatnonzero(~use_big_m)
        ind_A = sp.hstack([anchor_core[free], sp.csr_matrix((free.size, n_j))]).tocsr()
        indicators = Indicators(blocks["z"].start + free, ind_A, np.ones(free.size))

    miqp = MIQP(
        Q=Q, c=c, A=A, row_lo=row_lo, row_hi=row_hi, lb=lb, ub=ub,
        binary=np.arange(blocks["z"].start, n), blocks=blocks, indicators=indicators,
        start=start,
        tangent_points=_tangent_points(n, start, reference),
        csvm=CSVMData(phi_train, y_train, phi_anchor, y_anchor, float(C), sample_weight, tuple(requirements))
        if exact else None,
    )
    return CSVMProblem(miqp, m_j, exact)


def _tangent_points(n: int, start: np.ndarray | None, reference: SVMReference | None) -> tuple[np.ndarray, ...]:
    """The warm start and the plain SVM's w (padded to a full variable vector)."""
    points = [] if start is None else [start]
    if reference is not None:
        points.append(np.r_[reference.w, np.zeros(n - reference.w.size)])
    return tuple(points)


def build_partial_dual(
    gram: np.ndarray,
    y_train: np.ndarray,
    y_anchor: np.ndarray,
    *,
    C: float,
    min_counts: Mapping[str, int],
    big_m: float,
    sample_weight: np.ndarray,
) -> MIQP:
    r"""The paper's partial dual (its problem (CSVM)); variables ``[lambda, mu, beta, xi, z]``.

    With :math:`a = (\lambda \circ y_I, \mu \circ y_J)` and K the Gram matrix on
    :math:`I \cup J` (training rows first):

    .. math::

        \min\; a^\top K a + C \sum_i s_i \xi_i \quad \text{s.t.}\quad
        y_i((K a)_i + \beta) \ge 1 - \xi_i;\;
        y_j((K a)_j + \beta) \ge 1 - M(1 - z_j);\;
        \sum \lambda_i y_i + \sum \mu_j y_j = 0;\;
        0 \le \lambda_i \le C s_i / 2;\; 0 \le \mu_j \le M z_j;\; \text{rate rows}.

    The decision function is :math:`f(x) = \sum_t a_t K(x_t, x) + \beta`.
    It is kept as a reference: it needs M to bound the multipliers too.
    """
    n_i, n_j = y_train.shape[0], y_anchor.shape[0]
    nr = n_i + n_j
    y = np.r_[y_train, y_anchor]
    blocks = {
        "lambda": slice(0, n_i),
        "mu": slice(n_i, nr),
        "beta": slice(nr, nr + 1),
        "xi": slice(nr + 1, nr + 1 + n_i),
        "z": slice(nr + 1 + n_i, nr + 1 + n_i + n_j),
    }
    n = nr + 1 + n_i + n_j
    Dy = np.diag(y)
    Qa = Dy @ gram @ Dy
    Q = sp.block_diag([sp.csr_matrix(0.5 * (Qa + Qa.T)), sp.csr_matrix((n - nr, n - nr))]).tocsr()
    c = np.zeros(n)
    c[blocks["xi"]] = C * sample_weight
    margin = sp.csr_matrix(np.hstack([Dy @ gram @ Dy, y[:, None]]))  # y_r ((K a)_r + beta)
    train_rows = sp.hstack([margin[:n_i], sp.identity(n_i), sp.csr_matrix((n_i, n_j))])
    anchor_rows = sp.hstack([margin[n_i:], sp.csr_matrix((n_j, n_i)), sp.diags(np.full(n_j, -big_m))])
    balance = sp.csr_matrix(np.r_[y, 0.0, np.zeros(n_i + n_j)][None, :])
    mu_cap = sp.hstack([sp.csr_matrix((n_j, n_i)), sp.identity(n_j), sp.csr_matrix((n_j, 1 + n_i)), sp.diags(np.full(n_j, -big_m))])
    requirements = rate_requirements(y_anchor, min_counts)
    A = sp.vstack([train_rows, anchor_rows, balance, mu_cap, _count_rows(requirements, blocks["z"].start, n)]).tocsr()
    row_lo = np.r_[np.ones(n_i), np.full(n_j, 1.0 - big_m), 0.0, np.full(n_j, -np.inf), [q.count for q in requirements]]
    row_hi = np.r_[np.full(n_i + n_j, np.inf), 0.0, np.zeros(n_j), np.full(len(requirements), np.inf)]
    lb = np.r_[np.zeros(nr), -np.inf, np.zeros(n_i), np.zeros(n_j)]
    ub = np.r_[C * sample_weight / 2.0, np.full(n_j, big_m), np.inf, np.full(n_i, np.inf), np.ones(n_j)]
    return MIQP(
        Q=Q, c=c, A=A, row_lo=row_lo, row_hi=row_hi, lb=lb, ub=ub,
        binary=np.arange(blocks["z"].start, n), blocks=blocks,
    )


def build_l1_primal(
    phi_train: np.ndarray,
    y_train: np.ndarray,
    phi_anchor: np.ndarray,
    y_anchor: np.ndarray,
    *,
    C: float,
    min_counts: Mapping[str, int],
    big_m: float | None,
    sample_weight: np.ndarray,
    start: np.ndarray | None = None,
    upper: float | None = None,
) -> CSVMProblem:
    r"""The L1-norm CSVM, a mixed-integer *linear* program; variables ``[w_pos, w_neg, b, xi, z]``.

    .. math::

        \min\; \sum_f (w^+_f + w^-_f) + C \sum_{i \in I} s_i \xi_i \quad\text{s.t.}\quad
        y_i((w^+ - w^-)^\top \phi_i + b) \ge 1 - \xi_i;\;
        y_j((w^+ - w^-)^\top \phi_j + b) \ge 1 - M_j (1 - z_j);\;
        \sum_{j \in J_c} z_j \ge k_c;\; w^\pm \ge 0.

    At an optimum :math:`\min(w^+_f, w^-_f) = 0`, so the first sum is
    :math:`\|w\|_1` with :math:`w = w^+ - w^-` (Bradley and Mangasarian 1998;
    Zhu et al. 2004 with rate constraints added). ``upper`` (the objective of a
    feasible point) gives the valid bounds of
    :func:`csvm_stats.optimization.tightening.l1_primal_bounds`: :math:`M_j = \min(M, 1 -
    \ell_j)` and the fixings of ``z`` as in :func:`build_primal`. Without
    ``upper`` and with ``big_m=None`` the anchor rows become indicator
    constraints (then HiGHS cannot take the model). An exact model (as in
    :func:`build_primal`) carries its data as :attr:`MIQP.l1`.
    """
    from csvm_stats.optimization.tightening import l1_primal_bounds

    n_i, p = phi_train.shape
    n_j = phi_anchor.shape[0]
    blocks = {
        "w_pos": slice(0, p),
        "w_neg": slice(p, 2 * p),
        "b": slice(2 * p, 2 * p + 1),
        "xi": slice(2 * p + 1, 2 * p + 1 + n_i),
        "z": slice(2 * p + 1 + n_i, 2 * p + 1 + n_i + n_j),
    }
    n = 2 * p + 1 + n_i + n_j
    c = np.r_[np.ones(2 * p), 0.0, C * sample_weight, np.zeros(n_j)]
    lb = np.r_[np.zeros(2 * p), -np.inf, np.zeros(n_i + n_j)]
    ub = np.r_[np.full(2 * p + 1 + n_i, np.inf), np.ones(n_j)]
    proven = np.full(n_j, np.inf)
    if upper is not None and np.isfinite(upper):
        bounds = l1_primal_bounds(upper, phi_train, y_train, phi_anchor, y_anchor, C, sample_weight)
        ub[: 2 * p] = bounds.radius
        lb[2 * p], ub[2 * p] = bounds.b_lo, bounds.b_hi
        ub[blocks["xi"]] = bounds.xi_hi
        z = blocks["z"].start + np.arange(n_j)
        lb[z[bounds.anchor_lo >= 1.0]] = 1.0
        ub[z[bounds.anchor_hi < 1.0]] = 0.0
        proven = np.maximum(1.0 - bounds.anchor_lo, 0.0)
    m_j = proven if big_m is None else np.minimum(float(big_m), proven)
    use_big_m = np.isfinite(m_j)
    exact = big_m is None or bool(np.all(float(big_m) >= proven))

    def margin(phi: np.ndarray, y: np.ndarray) -> sp.csr_matrix:  # y (w+ - w-)' phi + y b
        yphi = phi * y[:, None]
        return sp.hstack([sp.csr_matrix(yphi), sp.csr_matrix(-yphi), sp.csr_matrix(y[:, None])]).tocsr()

    train_rows = sp.hstack([margin(phi_train, y_train), sp.identity(n_i), sp.csr_matrix((n_i, n_j))])
    anchor_core = sp.hstack([margin(phi_anchor, y_anchor), sp.csr_matrix((n_j, n_i))]).tocsr()
    big_m_rows = sp.hstack([anchor_core, sp.diags(-np.where(use_big_m, m_j, 0.0))]).tocsr()[use_big_m]
    requirements = rate_requirements(y_anchor, min_counts)
    A = sp.vstack([train_rows, big_m_rows, _count_rows(requirements, blocks["z"].start, n)]).tocsr()
    row_lo = np.r_[np.ones(n_i), 1.0 - m_j[use_big_m], [req.count for req in requirements]]
    indicators = None
    if not use_big_m.all():
        free = np.flatnonzero(~use_big_m)
        ind_A = sp.hstack([anchor_core[free], sp.csr_matrix((free.size, n_j))]).tocsr()
        indicators = Indicators(blocks["z"].start + free, ind_A, np.ones(free.size))
    miqp = MIQP(
        Q=sp.csr_matrix((n, n)), c=c, A=A, row_lo=row_lo, row_hi=np.full(A.shape[0], np.inf), lb=lb, ub=ub,
        binary=np.arange(blocks["z"].start, n), blocks=blocks, indicators=indicators, start=start,
        l1=CSVMData(phi_train, y_train, phi_anchor, y_anchor, float(C), sample_weight, tuple(requirements))
        if exact else None,
    )
    return CSVMProblem(miqp, m_j, exact)


def coefficient_blocks(problem: MIQP) -> tuple[str, ...]:
    """The blocks whose values make up w: ``("w",)`` or ``("w_pos", "w_neg")`` (w = w_pos - w_neg)."""
    return ("w",) if "w" in problem.blocks else ("w_pos", "w_neg")


def read_coefficients(problem: MIQP, x: np.ndarray) -> np.ndarray:
    """w from a solution vector of a problem of :func:`build_primal` or :func:`build_l1_primal`."""
    if "w" in problem.blocks:
        return x[problem.blocks["w"]]
    return x[problem.blocks["w_pos"]] - x[problem.blocks["w_neg"]]


def with_cardinality(problem: CSVMProblem, max_features: int) -> CSVMProblem:
    r"""Add binary feature indicators and a cardinality budget (Benitez-Pena et al. 2019).

    New variables :math:`v_f \in \{0, 1\}` (block ``v``) with
    :math:`|w_f| \le M_f v_f` and :math:`\sum_f v_f \le s`, so that at most s
    coefficients are non-zero (:func:`with_group_cardinality` with one group
    per column: ``w_f``, or ``w_pos_f`` and ``w_neg_f`` of the L1 primal).
    :math:`M_f` is the bound on :math:`|w_f|` the problem already carries (from
    the valid tightening of :func:`build_primal` / :func:`build_l1_primal`
    given a feasible point with at most s non-zeros), so the budget removes no
    solution that could be optimal; every bound must be finite. For the L2
    objective the pairs :math:`(w_f, v_f)` are recorded as
    :attr:`MIQP.perspective`, so backends can use the perspective relaxation
    :math:`t_f v_f \ge w_f^2`; an exact L2 primal also carries its data as
    :attr:`MIQP.cardinality` (for ``"bnb"``'s search over features).
    """
    miqp = problem.miqp
    names = coefficient_blocks(miqp)
    p = miqp.blocks[names[0]].stop - miqp.blocks[names[0]].start
    members = np.column_stack([miqp.blocks[name].start + np.arange(p) for name in names])
    sparse = with_group_cardinality(miqp, members, max_features)
    if miqp.csvm is not None and names == ("w",):
        sparse = replace(sparse, cardinality=CardinalityData(miqp.csvm, int(max_features)))
    return CSVMProblem(sparse, problem.big_m, problem.exact)


def with_group_cardinality(miqp: MIQP, members: np.ndarray, max_features: int) -> MIQP:
    r"""At most ``max_features`` groups of variables may be non-zero: one binary per group.

    ``members`` is an integer array of shape (p, m): row f lists the m
    variables of group f (a column's coefficient, or its coefficients in
    every class of a multiclass model: a gene list shared by all classes).
    New binaries :math:`v_f` (block ``v``) with :math:`|x_k| \le M_k v_f` for
    every member k of group f and :math:`\sum_f v_f \le s`. :math:`M_k` is the
    bound on :math:`|x_k|` the problem already carries, which must be finite
    and valid for every solution that could be optimal (the tightening from a
    feasible start with at most s non-zero groups). Members with a quadratic
    objective term become :attr:`MIQP.perspective` pairs :math:`(x_k, v_f)`:
    each :math:`t_k v_f \ge x_k^2` is valid because :math:`x_k = 0` when
    :math:`v_f = 0`. A start is extended by
    :math:`v_f = [\text{some member} \ne 0]`.
    """
    members = np.asarray(members, dtype=int)
    p, m = members.shape
    n = miqp.n_vars
    bound = np.maximum(-miqp.lb, miqp.ub)
    if not np.all(np.isfinite(bound[members])):
        raise ValueError("a cardinality budget needs finite bounds on the grouped variables (build with upper=...).")
    group = np.repeat(np.arange(p), m)
    flat = members.ravel()
    rows, row_hi = [], []
    for sign in (1.0, -1.0):
        keep = np.ones(flat.size, dtype=bool) if sign > 0 else miqp.lb[flat] < 0  # x >= 0 needs only x <= M v
        r = int(keep.sum())
        rows.append(sp.csr_matrix(
            (np.r_[np.full(r, sign), -bound[flat[keep]]], (np.r_[np.arange(r), np.arange(r)], np.r_[flat[keep], n + group[keep]])),
            shape=(r, n + p),
        ))
        row_hi.append(np.zeros(r))
    budget = sp.csr_matrix(np.r_[np.zeros(n), np.ones(p)][None, :])
    A = sp.vstack([sp.hstack([miqp.A, sp.csr_matrix((miqp.A.shape[0], p))]), *rows, budget]).tocsr()
    indicators = miqp.indicators
    if indicators is not None:
        ind_A = sp.hstack([indicators.A, sp.csr_matrix((indicators.A.shape[0], p))]).tocsr()
        indicators = Indicators(indicators.binary, ind_A, indicators.rhs)
    start = miqp.start
    if start is not None:
        start = np.r_[start, (np.abs(start[members]) > 0).any(axis=1).astype(float)]
    quadratic = miqp.Q.diagonal()[flat] != 0
    pairs = np.column_stack([flat, n + group])[quadratic]
    if miqp.perspective is not None:
        pairs = np.vstack([miqp.perspective, pairs])
    return MIQP(
        Q=sp.block_diag([miqp.Q, sp.csr_matrix((p, p))]).tocsr(),
        c=np.r_[miqp.c, np.zeros(p)],
        A=A,
        row_lo=np.r_[miqp.row_lo, np.full(A.shape[0] - miqp.A.shape[0], -np.inf)],
        row_hi=np.r_[miqp.row_hi, *row_hi, float(max_features)],
        lb=np.r_[miqp.lb, np.zeros(p)],
        ub=np.r_[miqp.ub, np.ones(p)],
        binary=np.r_[miqp.binary, n + np.arange(p)],
        blocks={**miqp.blocks, "v": slice(n, n + p)},
        indicators=indicators,
        start=start,
        tangent_points=tuple(np.r_[t, np.zeros(p)] for t in miqp.tangent_points),
        csvm=None,
        perspective=pairs if pairs.size else None,
    )
