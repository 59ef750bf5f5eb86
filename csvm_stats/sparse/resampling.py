r"""Class-stratified resamples of the training and anchor samples.

Both schemes resample each class on its own, so every resample has fixed
class sizes and a required anchor count keeps its meaning.

* :func:`stratified_bootstrap`: rows drawn with replacement, each class to
  its own size (the selection-stability table of a fit).
* :func:`complementary_halves`: the rows of each class are shuffled and cut
  into two disjoint halves of :math:`\lfloor n_c/2 \rfloor` rows (a class of
  odd size leaves one row out), a complementary pair :math:`(A, \bar A)`
  (Shah and Samworth 2013). Given the labels, the rows of a class are i.i.d.
  draws from that class's distribution, so the two halves of a pair are
  independent samples of equal size and class make-up: the condition of
  Shah and Samworth's error bound (:mod:`csvm_stats.sparse.stability`).

:func:`half_counts` carries a required anchor count over to a half of the
anchor sample: the same share of the rate's points,
:math:`\lceil k\, m / n \rceil` of the m points of the half when k of n were
required.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from csvm_stats.inference.certification import rate_points

CLASSES = (1.0, -1.0)


def stratified_bootstrap(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row positions drawn with replacement within each class (class sizes kept), sorted."""
    parts = [rng.choice(np.flatnonzero(y == label), size=int(np.sum(y == label))) for label in CLASSES]
    return np.sort(np.concatenate(parts))


def complementary_halves(y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint sorted row sets, each holding floor(n_c / 2) rows of every class c."""
    first, second = [], []
    for label in CLASSES:
        rows = rng.permutation(np.flatnonzero(y == label))
        half = rows.size // 2
        first.append(rows[:half])
        second.append(rows[half:2 * half])
    return np.sort(np.concatenate(first)), np.sort(np.concatenate(second))


def half_counts(min_counts: Mapping[str, int], y_anchor: np.ndarray, rows: np.ndarray) -> dict[str, int]:
    """Each required anchor count as the same share of the rate's points among the anchor ``rows``."""
    out = {}
    for rate, count in min_counts.items():
        n, m = int(rate_points(y_anchor, rate).sum()), int(rate_points(y_anchor[rows], rate).sum())
        out[rate] = math.ceil(count * m / n - 1e-9)
    return out
