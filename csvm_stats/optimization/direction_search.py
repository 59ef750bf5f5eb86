r"""A primal heuristic for requirements no shifted SVM meets: directions searched for the joint count.

Whether some rule meets the counts does not depend on the margin: a direction
w and a threshold t with :math:`w^\top\phi_j > t` for the counted positives
and :math:`< t` for the counted negatives become margins of at least 1 once
w is scaled by :math:`1/\min_j |w^\top\phi_j - t|` (intercept :math:`-t`
times the scale). So a direction is judged by its *shortfall*, the fewest
anchor points by which the requirements are missed over all thresholds,

.. math::

    \operatorname{short}(w) = \min_t \sum_c \max\bigl(0,\ k_c - \mathrm{met}_c(t)\bigr),
    \qquad \mathrm{met}_{tpr}(t) = \#\{j \in J_+ : w^\top\phi_j > t\},\
    \mathrm{met}_{tnr}(t) = \#\{j \in J_- : w^\top\phi_j < t\},

computed for every t at once from the sorted scores (O(n log n)); accuracy
counts both. A direction with shortfall 0 is a feasible point (its best
intercept and scale: :mod:`csvm_stats.optimization.intercept_shift`).

Directions tried, cheapest first, until one has shortfall 0 or the deadline
passes: the linear discriminant :math:`\Sigma^{-1}(\mu_+ - \mu_-)` (ridge
RIDGE) of the anchor sample and of :math:`I \cup J` (feature rows of at most
LDA_MAX_COLUMNS entries), and SVMs on :math:`I \cup J` with the positive class
weighted by CLASS_WEIGHTS (the unweighted one is the warm start that failed).
From the best direction, *target-set rounds*: take the anchor points it meets
at its best threshold plus, for each requirement, the missed points nearest
the threshold that it still needs (the target set S), and solve the linear
program

.. math::

    \min_{w, b, s \ge 0} \sum_{j \in S} s_j \quad\text{s.t.}\quad y_j(w^\top\phi_j + b) \ge 1 - s_j\ (j \in S),

whose value is 0 exactly when a hyperplane meets every margin of S (then the
requirements hold: a feasible point); otherwise its w is the next direction,
and the point of S with the largest slack is barred from later target sets
while enough others are left (a tabu list: without it the rounds cycle). The
rounds start from every direction above in turn, fewest short first, with a
fresh tabu list and at most ROUNDS_PER_START rounds each (one start can stall
where another reaches 0), ROUNDS in all; an LP (not interruptible) starts only when the
deadline leaves the time it is expected to take (LP_SECONDS_PER_ROW per target
point, or the rate the previous LP took on the deadline's clock). On the synthetic instance of ``benchmarks/solve_time.py``
(n = 1000, seed 0, TPR and TNR >= 0.9 on J without margin), where the shifted
SVM and all directions above stop 11 positives short and bnb had found nothing
in 10 CPU-s, the rounds reach a feasible rule in 0.3-0.5 CPU-s (seeds 0 to 2: see
``benchmarks/results/solve_time.md``).

The heuristic proves nothing when it fails: it reports the closest rule it
found (:class:`Closest`: what it met, how far short, what was tried), which
the fit's "no solution" message gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from csvm_stats.optimization import intercept_shift
from csvm_stats.optimization.budget import NO_DEADLINE, Deadline
from csvm_stats.optimization.problem import RATE_NAMES, RateRequirement

CLASS_WEIGHTS: tuple[float, ...] = (0.5, 2.0, 0.25, 4.0)  # weight of the positive class in the SVM directions
LDA_MAX_COLUMNS = 200  # feature rows wider than this (kernel maps) skip the discriminant directions
RIDGE = 1e-6  # relative ridge of the discriminant's covariance
ROUNDS = 60  # target-set linear programs in all (each about 0.01-0.05 CPU-s at 500 anchor points)
ROUNDS_PER_START = 15  # of them from one starting direction
LP_SECONDS_PER_ROW = 2.5e-4  # CPU-s per target point of one LP, measured at 12,500 points (3.0 CPU-s); 2000: 0.1
FACTORS: tuple[float, ...] = (1.0, 1.5, 2.0, 4.0)  # scales tried on a feasible direction (after its own scaling)


@dataclass(frozen=True)
class Closest:
    """The rule closest to the requirements that the search found: ``met`` anchor counts per requirement
    (against ``needed``), ``short`` points short in all, ``source`` the direction, ``tried`` what was searched."""

    short: float
    met: dict[str, int]
    needed: dict[str, int]
    sizes: dict[str, int]
    source: str
    tried: str

    def describe(self, proven: bool = False) -> str:
        """In words, for the fit's message (``proven``: the search has proven that no rule meets them)."""
        parts = []
        for kind, count in self.needed.items():
            gap = count - self.met[kind]
            tail = f" ({gap} short)" if gap > 0 else ""
            parts.append(f"{RATE_NAMES[kind]} {self.met[kind]}/{self.sizes[kind]} (needs {count}){tail}")
        closest = f"the closest rule found ({self.source}) has " + ", ".join(parts)
        if proven:
            return closest
        return (closest + f"; searched: {self.tried}. No proof of infeasibility is known to be fast for continuous "
                "predictors, so either the requirements cannot be met on this anchor sample or a longer search is "
                "needed")


@dataclass(frozen=True)
class SearchResult:
    """``direction``: a direction meeting every requirement at some threshold (``None``: none found);
    ``closest``: the best the search reached."""

    direction: np.ndarray | None
    closest: Closest


def _sizes(y_anchor: np.ndarray) -> dict[str, int]:
    return {"tpr": int((y_anchor > 0).sum()), "tnr": int((y_anchor < 0).sum()), "acc": int(y_anchor.size)}


def shortfall(scores: np.ndarray, y_anchor: np.ndarray,
              requirements: Sequence[RateRequirement]) -> tuple[int, float, dict[str, int]]:
    """``(short, t, met)``: the least shortfall of the module docstring over thresholds t (between distinct
    scores, or beyond all), the threshold reaching it and the counts met there (requirements' members are whole
    classes or all points)."""
    values = np.unique(scores)
    t = np.r_[values[0] - 1.0, (values[:-1] + values[1:]) / 2.0, values[-1] + 1.0]
    pos, neg = np.sort(scores[y_anchor > 0]), np.sort(scores[y_anchor < 0])
    met = {"tpr": pos.size - np.searchsorted(pos, t, side="right"), "tnr": np.searchsorted(neg, t, side="left")}
    met["acc"] = met["tpr"] + met["tnr"]
    short = np.zeros(t.size, dtype=np.int64)
    for req in requirements:
        short += np.maximum(0, req.count - met[req.kind])
    k = int(np.argmin(short))
    return int(short[k]), float(t[k]), {req.kind: int(met[req.kind][k]) for req in requirements}


def _target_set(scores: np.ndarray, y_anchor: np.ndarray, t: float, requirements: Sequence[RateRequirement],
                tabu: np.ndarray) -> np.ndarray:
    """The anchor points met at threshold t plus the missed ones nearest t that each requirement still needs
    (not ``tabu`` ones, while enough others are left)."""
    signed = y_anchor * (scores - t)  # > 0: on its class's side
    chosen = signed > 0
    distance = np.where(chosen, np.inf, -signed) + np.where(tabu, np.inf, 0.0)
    for req in requirements:
        members = req.members
        need = req.count - int(chosen[members].sum())
        if need > 0:
            missed = members[~chosen[members]]
            chosen[missed[np.argsort(distance[missed], kind="stable")[:need]]] = True
    return np.flatnonzero(chosen)


def _soft_lp(phi: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, float] | None:
    """The target-set LP of the module docstring: (value, w, b), ``None`` when the LP solver fails (the slack
    columns are an identity block, stored sparse: memory linear in the target set)."""
    m, p = phi.shape
    c = np.r_[np.zeros(p + 1), np.ones(m)]
    A = -sp.hstack([sp.csr_matrix(np.c_[y[:, None] * phi, y]), sp.identity(m, format="csr")], format="csr")
    bounds = [(None, None)] * (p + 1) + [(0, None)] * m
    res = linprog(c, A_ub=A, b_ub=-np.ones(m), bounds=bounds, method="highs")
    if res.status != 0:
        return None
    return float(res.fun), res.x[:p], float(res.x[p])


def _discriminant(phi: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """:math:`\\Sigma^{-1}(\\mu_+ - \\mu_-)` with the pooled within-class covariance (ridge RIDGE)."""
    pos, neg = phi[y > 0], phi[y < 0]
    if pos.shape[0] < 2 or neg.shape[0] < 2:
        return None
    centred = np.vstack([pos - pos.mean(axis=0), neg - neg.mean(axis=0)])
    cov = centred.T @ centred / max(1, centred.shape[0] - 2)
    cov += RIDGE * max(float(np.trace(cov)) / cov.shape[0], 1e-12) * np.eye(cov.shape[0])
    return np.linalg.solve(cov, pos.mean(axis=0) - neg.mean(axis=0))


def search_directions(phi_train: np.ndarray, y_train: np.ndarray, phi_anchor: np.ndarray, y_anchor: np.ndarray,
                      requirements: Sequence[RateRequirement], svm_direction: Callable[[np.ndarray], np.ndarray],
                      deadline: Deadline = NO_DEADLINE) -> SearchResult:
    """The heuristic of the module docstring, after the warm start's own (unweighted) SVM direction failed.

    ``svm_direction(weights)`` returns the direction of an SVM on I u J with per-row weights (the caller's
    solver, stopped at ``deadline``).
    """
    needed = {req.kind: req.count for req in requirements}
    tried: list[str] = ["the SVM direction (the warm start)"]
    best: tuple[int, np.ndarray, str] | None = None
    starts: list[tuple[int, int, np.ndarray]] = []  # (shortfall, order, direction) of every direction judged

    def judge(w: np.ndarray | None, source: str) -> int | None:
        """The shortfall of w (``None``: no direction), kept as the best when it is."""
        nonlocal best
        if w is None or not np.all(np.isfinite(w)) or not np.any(w):
            return None
        short = shortfall(phi_anchor @ w, y_anchor, requirements)[0]
        if best is None or short < best[0]:
            best = (short, w, source)
        return short

    def candidate(w: np.ndarray | None, source: str) -> bool:
        """Judge a starting direction and keep it for the rounds; whether it meets the counts."""
        short = judge(w, source)
        if short is not None:
            starts.append((short, len(starts), w))
        return short == 0

    done = False
    stacked_phi, stacked_y = np.vstack([phi_train, phi_anchor]), np.r_[y_train, y_anchor]
    if phi_anchor.shape[1] <= LDA_MAX_COLUMNS:
        tried.append("linear discriminants of J and of I u J")
        done = (candidate(_discriminant(phi_anchor, y_anchor), "the linear discriminant of the anchor sample")
                or candidate(_discriminant(stacked_phi, stacked_y), "the linear discriminant of I u J"))
    weights_tried = []
    for weight in CLASS_WEIGHTS:
        if done or deadline.expired():
            break
        weights_tried.append(f"{weight:g}")
        done = candidate(svm_direction(np.where(stacked_y > 0, weight, 1.0)),
                         f"an SVM with the positive class weighted {weight:g}")
    if weights_tried:
        tried.append(f"SVMs with the positive class weighted {', '.join(weights_tried)}")
    rounds, per_row, out_of_time = 0, LP_SECONDS_PER_ROW, False
    for _, _, current in sorted(starts, key=lambda item: item[:2]):  # fewest short first, each with a fresh tabu list
        tabu, taken = np.zeros(y_anchor.shape[0], dtype=bool), 0
        while not done and rounds < ROUNDS and taken < ROUNDS_PER_START and not deadline.expired():
            scores = phi_anchor @ current
            target = _target_set(scores, y_anchor, shortfall(scores, y_anchor, requirements)[1], requirements, tabu)
            if deadline.left() < per_row * target.size:  # one LP is not interruptible: start none that would overrun
                tried.append("no further linear program fitted in the warm start's share of the time limit")
                out_of_time = True
                break
            rounds, taken = rounds + 1, taken + 1
            clock0 = deadline.read()
            solved = _soft_lp(phi_anchor[target], y_anchor[target])
            per_row = max(per_row, (deadline.read() - clock0) / max(1, target.size))
            if solved is None:
                break
            value, current, b = solved
            done = judge(current, f"target-set linear program {rounds}") == 0
            if done and value <= 0:  # the LP's own (w, b) meets every margin of the target set: no rescaling
                tried.append(f"{rounds} target-set linear program{'s' if rounds > 1 else ''}")
                return SearchResult(current, Closest(0, shortfall(phi_anchor @ current, y_anchor, requirements)[2],
                                                     needed, _sizes(y_anchor), best[2], "; ".join(tried)))
            if value > 0:  # the point the LP fits worst leaves this start's target sets (tabu)
                slack = 1.0 - y_anchor[target] * (phi_anchor[target] @ current + b)
                tabu[target[int(np.argmax(slack))]] = True
        if out_of_time or done or rounds >= ROUNDS:
            break
    if rounds:
        tried.append(f"{rounds} target-set linear program{'s' if rounds > 1 else ''}")
    if deadline.expired() and not done:
        tried.append("stopped at the warm start's share of the time limit")
    if best is None:
        closest = Closest(math.inf, {k: 0 for k in needed}, needed, _sizes(y_anchor), "none", "; ".join(tried))
        return SearchResult(None, closest)
    short, t, met = shortfall(phi_anchor @ best[1], y_anchor, requirements)
    closest = Closest(short, met, needed, _sizes(y_anchor), best[2], "; ".join(tried) or "nothing")
    if short > 0:
        return SearchResult(None, closest)
    return SearchResult(_scaled(best[1], phi_anchor @ best[1], y_anchor, t, requirements), closest)


def _scaled(w: np.ndarray, scores: np.ndarray, y_anchor: np.ndarray, t: float,
            requirements: Sequence[RateRequirement]) -> np.ndarray:
    """w scaled so that every point on its side of t has margin >= 2 about t (the intercept search then has
    room: :func:`feasible_point`)."""
    members = np.unique(np.concatenate([req.members for req in requirements]))
    signed = y_anchor[members] * (scores[members] - t)
    gap = float(signed[signed > 0].min()) if (signed > 0).any() else 1.0
    return w * (2.0 / gap)


def feasible_point(direction: np.ndarray, phi_train: np.ndarray, y_train: np.ndarray, phi_anchor: np.ndarray,
                   y_anchor: np.ndarray, C: float, weight: np.ndarray,
                   requirements: Sequence[RateRequirement]) -> tuple[float, np.ndarray, float] | None:
    """``(objective, w, b)``: the best scale (FACTORS) and intercept of a direction with shortfall 0."""
    return intercept_shift.best_shift(direction, phi_train, y_train, phi_anchor, y_anchor, C, weight, requirements,
                                      FACTORS)
