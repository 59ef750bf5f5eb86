r"""Interchangeable anchor points: orbits that bnb branches on in one order only (kernels at exact rank).

With an RBF kernel and a large gamma most anchor points sit alone in the
kernel's reach: forcing any of them costs the same, the search cannot tell
the subsets of them apart and enumerates which few to give up. Two anchor
points j, k of the same class, in the same requirements and free at the
root, are *interchangeable* when swapping them maps every forced set F to a
forced set F' = (j k)F with :math:`D(F') \le D(F) + \text{slack}`. Within an
orbit :math:`o_1, \dots, o_m` of such points bnb then only keeps forced sets
whose orbit part is a prefix, :math:`z_{o_1} \ge \dots \ge z_{o_m}`: forcing
:math:`o_i` forces :math:`o_1, \dots, o_{i-1}`, dropping it drops
:math:`o_{i+1}, \dots, o_m` (:func:`propagate`). Every forced set is mapped
onto a prefix by at most :math:`\lfloor m/2 \rfloor` swaps of orbit members,
and counts are kept (same requirements), so the restricted problem's
optimum is at most the CSVM's plus the summed slack, which bnb adds to its
prune level and subtracts from the bound it reports.

*The slack of one swap, proven.* Take the optimum (w, b) of D(F) with j in F
and k not; :math:`\|w\|^2 \le D(F) \le U` for every F that can beat the
incumbent U, so :math:`\|w\| \le R = \sqrt U`. With :math:`u = \phi_j, v =
\phi_k` two maps give a point whose margins move little:

- *reflection* :math:`H = I - 2 dd^\top / \|d\|^2`, :math:`d = \hat u - \hat v`
  (unit vectors): an isometry with :math:`Hv = (\|v\|/\|u\|)\, u`, so the margin
  of k under Hw is j's old one up to :math:`R\,|\|u\| - \|v\||`, and every other
  row s moves by at most :math:`2R\,|d^\top\phi_s| / \|d\|` with
  :math:`|d^\top \phi_s| \le |K_{js}|/\|u\| + |K_{ks}|/\|v\|` (small when j and k
  are isolated);
- *identity* (duplicated points): w is kept, only the margins of j and k
  change, by at most :math:`R\|u - v\|`.

Summed over the swaps, every forced margin stays above :math:`1 - \Delta_a`
and the weighted hinge sum grows by at most :math:`\Delta_h` (per swap the
sum over training rows of :math:`c_s` times its move); scaling (w, b) by
:math:`\lambda = 1/(1 - \Delta_a)` restores the forced margins and at most
multiplies the hinge terms by :math:`\lambda`, so

.. math::

    D(\pi F) \le \lambda^2 D(F) + \lambda \Delta_h
    \le D(F) + (\lambda^2 - 1) U + \lambda \Delta_h = D(F) + \text{slack}.

Kernel entries are read from the Gram matrix with a rounding allowance of
:math:`4 p\,\varepsilon \|\phi_s\|\|\phi_t\|` each (p feature columns).
Only the optimum's own w matters, and :math:`\|w\|^2 \le D(F) \le U` for the
*current* incumbent U, so the slack is re-evaluated as U falls (the moves
scale with R): :meth:`Orbits.slack_at`. Orbits are grown greedily while the
slack at the incumbent of the time stays within SLACK_SHARE of the search's
optimality gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

SLACK_SHARE = 0.01  # the summed slack may take this share of mip_gap x incumbent
DUPLICATE_GRAM_DISTANCE = 1e-4  # squared distance (from the Gram matrix) below which the identity map is tried
MIN_REFLECTION_DISTANCE = 0.5  # ||u_hat - v_hat|| below which the reflection is not tried


@dataclass(frozen=True)
class Orbits:
    """Orbits of interchangeable anchor points (anchor indices ``elems[starts[o]:starts[o + 1]]`` in branching
    order) and their summed moves per unit of R (module docstring)."""

    elems: np.ndarray
    starts: np.ndarray
    move_a: float
    move_h: float

    def slack_at(self, incumbent: float) -> float:
        """The slack their symmetry breaking adds to the optimum, for an incumbent of value ``incumbent``."""
        if self.count == 0:
            return 0.0
        radius = float(np.sqrt(max(incumbent, 0.0)))
        return slack(radius * self.move_a, radius * self.move_h, incumbent)

    @property
    def count(self) -> int:
        return self.starts.size - 1

    def orbit_of(self, n_anchor: int) -> np.ndarray:
        """Each anchor point's orbit (``-1``: none)."""
        which = np.full(n_anchor, -1, dtype=np.int64)
        for o in range(self.count):
            which[self.elems[self.starts[o]:self.starts[o + 1]]] = o
        return which


NO_ORBITS = Orbits(np.empty(0, np.int64), np.zeros(1, np.int64), 0.0, 0.0)


@njit(cache=True)
def propagate(forced, dropped, elems, starts, count):
    """Make every orbit's part of (forced, dropped) a prefix order, in place; ``False`` if no forced set of the
    node is one (a member forced after a dropped one)."""
    for o in range(count):
        lo, hi = starts[o], starts[o + 1]
        last_forced, first_dropped = lo - 1, hi
        for q in range(lo, hi):
            k = elems[q]
            if forced[k]:
                last_forced = q
            elif dropped[k] and first_dropped == hi:
                first_dropped = q
        if first_dropped < last_forced:
            return False
        for q in range(lo, last_forced):
            forced[elems[q]] = True
        for q in range(first_dropped + 1, hi):
            dropped[elems[q]] = True
    return True


def _swap_moves(gram: np.ndarray, phi: np.ndarray, cw: np.ndarray, n_train: int, rows: np.ndarray,
                radius: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Per pair of ``rows`` (stacked rows of anchor points): the forced-margin move :math:`\Delta_a` and the
    hinge move :math:`\Delta_h` of one swap for :math:`\|w\| \le` ``radius`` (the better of the two maps;
    ``inf``: neither applies)."""
    n, p = gram.shape[0], phi.shape[1]
    eps = 4.0 * p * np.finfo(float).eps
    norms = np.sqrt(np.maximum(np.diag(gram), 0.0))
    nr = norms[rows]
    mass = np.abs(gram[rows]) + eps * nr[:, None] * norms[None, :]  # |K_js| with its rounding allowance
    mass[np.arange(rows.size), rows] = 0.0
    unit = mass / np.maximum(nr, 1e-300)[:, None]
    hinge = unit[:, :n_train] @ cw  # sum_s c_s |K_js| / ||u||
    anchor = unit[:, n_train:n].max(axis=1, initial=0.0)  # max over other anchor rows
    cos = mass[:, rows] / np.maximum(np.outer(nr, nr), 1e-300)
    dist = np.sqrt(np.maximum(2.0 - 2.0 * cos, 0.0))  # lower bound of ||u_hat - v_hat||
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect_a = radius * np.maximum(np.abs(nr[:, None] - nr[None, :]) + eps * (nr[:, None] + nr[None, :]),
                                        2.0 * (anchor[:, None] + anchor[None, :]) / dist)
        reflect_h = radius * 2.0 * (hinge[:, None] + hinge[None, :]) / dist
    usable = dist >= MIN_REFLECTION_DISTANCE
    move_a = np.where(usable, reflect_a, np.inf)
    move_h = np.where(usable, reflect_h, np.inf)
    sub = gram[np.ix_(rows, rows)]
    close = np.argwhere(np.diag(sub)[:, None] + np.diag(sub)[None, :] - 2.0 * sub <= DUPLICATE_GRAM_DISTANCE)
    for a, b in close:
        if a < b:
            gap = float(np.linalg.norm(phi[rows[a]] - phi[rows[b]])) * (1.0 + eps) + eps * (nr[a] + nr[b])
            if radius * gap < move_a[a, b] or not np.isfinite(move_h[a, b]):
                move_a[a, b] = move_a[b, a] = radius * gap
                move_h[a, b] = move_h[b, a] = 0.0
    return move_a, move_h


def slack(move_a: float, move_h: float, incumbent: float) -> float:
    r"""The module docstring's slack: :math:`(\lambda^2 - 1) U + \lambda \Delta_h`, :math:`\lambda = 1/(1 - \Delta_a)`
    (``inf`` when :math:`\Delta_a \ge 1/2`)."""
    if not move_a < 0.5 or not np.isfinite(move_h):
        return np.inf
    scale = 1.0 / (1.0 - move_a)
    return (scale * scale - 1.0) * incumbent + scale * move_h


def find_orbits(gram: np.ndarray, phi: np.ndarray, y: np.ndarray, cw: np.ndarray, n_train: int,
                members: list[np.ndarray], free: np.ndarray, incumbent: float, budget: float) -> Orbits:
    """Orbits among the ``free`` anchor points (same class and requirements), grown greedily (most isolated first)
    while the summed slack stays within ``budget``; stacked rows ``[I; J]`` in ``gram``, ``phi``, ``y``."""
    if not np.isfinite(incumbent) or incumbent < 0 or budget <= 0:
        return NO_ORBITS
    radius = float(np.sqrt(incumbent))
    n_anchor = y.size - n_train
    signature = np.zeros((n_anchor, len(members) + 1))
    signature[:, 0] = y[n_train:]
    for r, m in enumerate(members):
        signature[m, r + 1] = 1.0
    candidates = np.flatnonzero(free)
    groups: dict[tuple, list[int]] = {}
    for j in candidates:
        groups.setdefault(tuple(signature[j]), []).append(int(j))
    total_a, total_h = 0.0, 0.0
    orbits: list[list[int]] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        idx = np.array(group)
        move_a, move_h = _swap_moves(gram, phi, cw, n_train, n_train + idx, radius)
        order = np.argsort(np.where(np.isfinite(move_h), move_h, np.inf).min(axis=1), kind="stable")
        local: list[tuple[list[int], float, float]] = []  # members (positions in idx), worst pair moves
        for q in order:
            placed = False
            for o, (mem, worst_a, worst_h) in enumerate(local):
                new_a = max(worst_a, float(move_a[q, mem].max()))
                new_h = max(worst_h, float(move_h[q, mem].max()))
                swaps_before, swaps_after = len(mem) // 2, (len(mem) + 1) // 2
                cand_a = total_a - swaps_before * worst_a + swaps_after * new_a
                cand_h = total_h - swaps_before * worst_h + swaps_after * new_h
                if slack(cand_a, cand_h, incumbent) <= budget:
                    local[o] = (mem + [int(q)], new_a, new_h)
                    total_a, total_h, placed = cand_a, cand_h, True
                    break
            if not placed:
                local.append(([int(q)], 0.0, 0.0))
        orbits.extend([[group[q] for q in mem] for mem, _, _ in local if len(mem) > 1])
    if not orbits:
        return NO_ORBITS
    elems = np.array([j for orbit in orbits for j in orbit], dtype=np.int64)
    starts = np.r_[0, np.cumsum([len(orbit) for orbit in orbits])].astype(np.int64)
    return Orbits(elems, starts, total_a / radius, total_h / radius)
