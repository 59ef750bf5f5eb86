r"""Inductive Venn-Abers predictors: calibrated probability intervals from a score.

Given calibration pairs :math:`(s_i, y_i)`, i = 1..n, of a score (a decision
function the fit never saw these points through) and labels
:math:`y_i \in \{0, 1\}`, the Venn-Abers predictor (Vovk and Petej 2014) gives
a new point with score :math:`s` the two probabilities

.. math::

    p_\ell(s) = g_\ell(s), \qquad \ell \in \{0, 1\},

where :math:`g_\ell` is the isotonic (non-decreasing) least-squares fit to the
n calibration pairs together with the pair :math:`(s, \ell)`, evaluated at
:math:`s`. Points with equal scores are pooled (one value per distinct score).
Under exchangeability of the calibration points and the new point, one of
:math:`p_0, p_1` is a perfectly calibrated probability of :math:`y = 1`
(Vovk, Petej and Fedorova 2015, Theorem 1), so :math:`[p_0, p_1]` is an
interval that contains a calibrated probability. Its width is at most about
the reciprocal of the number of calibration points near s. The merged point
probability, which minimises the worst-case log loss against the two, is

.. math:: p(s) = \frac{p_1(s)}{1 - p_0(s) + p_1(s)}.

Both :math:`p_0` and :math:`p_1` (and so p) are non-decreasing in s, so a rule
"positive when :math:`s \ge t`" is a rule on the probability scale as well.

Computation: :math:`p_\ell(s)` depends on s only through its *slot* among the
k distinct calibration scores :math:`c_1 < \dots < c_k`: below :math:`c_1`,
equal to :math:`c_j`, strictly between :math:`c_j` and :math:`c_{j+1}`, or
above :math:`c_k` (2k + 1 slots). :meth:`VennAbers.fit` sorts the scores
(O(n log n)) and runs the pool-adjacent-violators algorithm once from the left
and once from the right, keeping the block stacks of every prefix and suffix
(O(k) time and memory). A slot's two probabilities are computed when a score
first falls in it (or for all slots when the table ``p0``/``p1`` is read, as
saving a model does), by merging the new point's block with its neighbouring
blocks while they violate the order. The result is the same isotonic fit as
fitting twice per slot from scratch (tested against that and against the
PyPI package ``venn-abers``).
"""

from __future__ import annotations

import numpy as np

from csvm_stats.exceptions import DataError


class _Stacks:
    """PAVA block stacks of every prefix (from the left) and every suffix (from the right).

    Prefix state ``j`` (groups 0..j-1) has a top block of sum ``p_sum[j]`` and
    weight ``p_weight[j]`` starting at group ``p_next[j]``; the block below it is
    the top of prefix state ``p_next[j]``. Suffix state ``j`` (groups j..k-1)
    likewise, its first block ending before group ``s_next[j]``. Plain lists:
    the loops below index single elements, which lists do several times faster
    than numpy arrays.
    """

    def __init__(self, sums: list[float], weights: list[float]) -> None:
        k = self.k = len(sums)
        self.sums, self.weights = sums, weights
        p_sum, p_weight, p_next = [0.0] * (k + 1), [0.0] * (k + 1), [0] * (k + 1)
        for j in range(k):
            S, W, start = sums[j], weights[j], j
            while start > 0 and p_sum[start] * W > S * p_weight[start]:  # block below has the larger mean
                S, W, start = S + p_sum[start], W + p_weight[start], p_next[start]
            p_sum[j + 1], p_weight[j + 1], p_next[j + 1] = S, W, start
        s_sum, s_weight, s_next = [0.0] * (k + 1), [0.0] * (k + 1), [k] * (k + 1)
        for j in range(k - 1, -1, -1):
            S, W, end = sums[j], weights[j], j + 1
            while end < k and s_sum[end] * W < S * s_weight[end]:  # block after has the smaller mean
                S, W, end = S + s_sum[end], W + s_weight[end], s_next[end]
            s_sum[j], s_weight[j], s_next[j] = S, W, end
        self.p_sum, self.p_weight, self.p_next = p_sum, p_weight, p_next
        self.s_sum, self.s_weight, self.s_next = s_sum, s_weight, s_next

    def values(self, slots: list[int]) -> np.ndarray:
        """p0 and p1 (rows) of each slot: the isotonic value of the new point with label 0 and with label 1.

        The new point's block (alone in slot 2j, pooled with group j in slot
        2j + 1) merges with the block below it while that has the larger mean,
        or with the block after it while that has the smaller mean; what is
        left is the isotonic fit at the new point (PAVA ends in the same,
        unique, fit whatever the order of its merges).
        """
        p_sum, p_weight, p_next = self.p_sum, self.p_weight, self.p_next
        s_sum, s_weight, s_next, k = self.s_sum, self.s_weight, self.s_next, self.k
        sums, weights = self.sums, self.weights
        rows: list[list[float]] = [[], []]
        for label, row in enumerate(rows):
            for slot in slots:
                j = slot >> 1
                if slot & 1:
                    S, W, left, right = sums[j] + label, weights[j] + 1.0, j, j + 1
                else:
                    S, W, left, right = float(label), 1.0, j, j
                while True:
                    if left > 0 and p_sum[left] * W > S * p_weight[left]:
                        S, W, left = S + p_sum[left], W + p_weight[left], p_next[left]
                    elif right < k and s_sum[right] * W < S * s_weight[right]:
                        S, W, right = S + s_sum[right], W + s_weight[right], s_next[right]
                    else:
                        break
                row.append(S / W)
        return np.array(rows)


def check_scores(scores, what: str = "scores") -> np.ndarray:
    """A one-dimensional float array of finite scores, or a :class:`DataError` naming the problem."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1:
        raise DataError(f"{what} must be one-dimensional (one score per point), got shape {s.shape}.")
    bad = ~np.isfinite(s)
    if bad.any():
        raise DataError(
            f"{what} has {int(bad.sum())} missing or infinite value(s) (first at position {int(np.argmax(bad))}); "
            "a probability cannot be given for them. Remove or impute the rows with missing predictors first."
        )
    return s


#: Relative distance under which a new score counts as tied with a calibration score.
TIE_TOLERANCE = 1e-9


class VennAbers:
    """A fitted inductive Venn-Abers predictor (module docstring).

    Slot 2j is strictly between ``scores[j-1]`` and ``scores[j]`` (slot 0
    below all, slot 2k above all), slot 2j + 1 equal to ``scores[j]``.

    :meth:`fit` computes a slot's two probabilities when a score first falls
    in it (:meth:`interval`), or all of them when ``p0`` or ``p1`` is read;
    the constructor takes a complete table (as a model file stores it).

    Parameters
    ----------
    scores : numpy.ndarray
        The k distinct calibration scores, sorted.
    p0, p1 : numpy.ndarray
        Length 2k + 1: the lower and upper probability of every slot.
    n : int
        Number of calibration points.
    n_positive : int
        Number of positives among them.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats.probability.venn_abers import VennAbers
    >>> va = VennAbers.fit(np.array([-2.0, -1.0, 0.5, 1.0, 2.0]), np.array([0, 0, 1, 0, 1]))
    >>> p0, p1 = va.interval([0.7])
    >>> bool(p0[0] <= p1[0])
    True
    """

    def __init__(self, scores: np.ndarray, p0: np.ndarray, p1: np.ndarray, n: int, n_positive: int) -> None:
        self.scores = np.asarray(scores, dtype=float)
        self._table = np.vstack([np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)])
        self._stacks: _Stacks | None = None
        self.n, self.n_positive = int(n), int(n_positive)

    def __repr__(self) -> str:
        return f"VennAbers(n={self.n}, n_positive={self.n_positive}, distinct scores={self.scores.size})"

    def __eq__(self, other: object) -> bool:
        """Equal predictors: the same counts, scores and table (computed in full to compare)."""
        if not isinstance(other, VennAbers):
            return NotImplemented
        return ((self.n, self.n_positive) == (other.n, other.n_positive) and np.array_equal(self.scores, other.scores)
                and np.array_equal(self.p0, other.p0) and np.array_equal(self.p1, other.p1))

    __hash__ = None  # type: ignore[assignment]  # a mutable cache inside; equal by value

    @classmethod
    def fit(cls, scores, labels) -> VennAbers:
        """Calibrate on ``scores`` with 0/1 (or -1/+1, or bool) ``labels``; needs at least one point.

        Parameters
        ----------
        scores : array-like of float
            Calibration scores (decision values of points the classifier was not fitted on).
        labels : array-like
            Their labels: 0/1, -1/+1 or bool.

        Returns
        -------
        VennAbers
            The fitted predictor.

        Raises
        ------
        csvm_stats.exceptions.DataError
            No points, lengths that differ, labels other than two values, or a
            NaN or infinite score.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.probability.venn_abers import VennAbers
        >>> va = VennAbers.fit(np.array([-2.0, -1.0, 0.5, 1.0, 2.0]), np.array([0, 0, 1, 0, 1]))
        >>> va.n, va.n_positive
        (5, 2)
        """
        s = check_scores(scores, "calibration scores")
        y = np.asarray(labels)
        if y.shape != s.shape:
            raise DataError(f"{s.size} calibration scores but labels of shape {y.shape}; pass one label per score.")
        if s.size == 0:
            raise DataError("Venn-Abers calibration needs at least one calibration point; got none.")
        if not np.isin(y, (-1, 0, 1)).all():
            raise DataError("calibration labels must be 0/1, -1/+1 or booleans (1 or +1: the positive class).")
        positive = (y > 0).astype(float)
        c, inverse = np.unique(s, return_inverse=True)
        k = c.size
        weights = np.bincount(inverse, minlength=k).astype(float).tolist()
        sums = np.bincount(inverse, weights=positive, minlength=k).tolist()
        va = cls(c, np.full(2 * k + 1, np.nan), np.full(2 * k + 1, np.nan), s.size, int(positive.sum()))
        va._stacks = _Stacks(sums, weights)
        return va

    def _values(self, slot: np.ndarray) -> np.ndarray:
        """p0 and p1 (rows) of the given slots, computing those not known yet."""
        if self._stacks is not None:
            todo = np.unique(slot[np.isnan(self._table[0, slot])])
            if todo.size:
                if not self._table.flags.writeable:  # e.g. unpickled from a read-only memory map
                    self._table = self._table.copy()
                self._table[:, todo] = self._stacks.values(todo.tolist())
                if not np.isnan(self._table[0]).any():
                    self._stacks = None  # the table is complete
        return self._table[:, slot]

    @property
    def p0(self) -> np.ndarray:
        """Lower probability of every slot (class docstring)."""
        return self._values(np.arange(self._table.shape[1]))[0]

    @property
    def p1(self) -> np.ndarray:
        """Upper probability of every slot (class docstring)."""
        return self._values(np.arange(self._table.shape[1]))[1]

    def slots(self, scores) -> np.ndarray:
        """Slot of each score (class docstring); NaN or infinite scores are an error.

        A score within ``TIE_TOLERANCE`` (relative) of a calibration score
        counts as tied with it, so that the rounding of one point's decision
        value computed in another batch cannot move it to the next slot.

        Parameters
        ----------
        scores : array-like of float
            Scores of new points (the calibrated classifier's decision values).

        Returns
        -------
        numpy.ndarray of int
            The slot (class docstring) of each score.

        Raises
        ------
        csvm_stats.exceptions.DataError
            A score is NaN or infinite.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.probability.venn_abers import VennAbers
        >>> va = VennAbers.fit(np.array([-2.0, -1.0, 0.5, 1.0, 2.0]), np.array([0, 0, 1, 0, 1]))
        >>> va.slots([-3.0, -2.0, 3.0]).tolist()
        [0, 1, 10]
        """
        s = check_scores(scores)
        c, k = self.scores, self.scores.size
        j = np.searchsorted(c, s, side="left")
        below, above = np.clip(j - 1, 0, k - 1), np.clip(j, 0, k - 1)
        tol = TIE_TOLERANCE * np.maximum(1.0, np.abs(s))
        return np.where(np.abs(c[above] - s) <= tol, 2 * above + 1,
                        np.where(np.abs(c[below] - s) <= tol, 2 * below + 1, 2 * j))

    def interval(self, scores) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper probabilities ``(p0, p1)`` of y = 1 for each score.

        Parameters
        ----------
        scores : array-like of float
            Scores of new points (the calibrated classifier's decision values).

        Returns
        -------
        tuple of numpy.ndarray
            ``(p0, p1)``, each with one entry per score, ``p0 <= p1``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            A score is NaN or infinite.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.probability.venn_abers import VennAbers
        >>> va = VennAbers.fit(np.array([-2.0, -1.0, 0.5, 1.0, 2.0]), np.array([0, 0, 1, 0, 1]))
        >>> p0, p1 = va.interval([0.0, 1.5])
        >>> bool((p0 <= p1).all())
        True
        """
        p0, p1 = self._values(self.slots(scores))
        return p0, p1

    def predict(self, scores) -> np.ndarray:
        """Merged probability ``p1 / (1 - p0 + p1)`` of y = 1 for each score.

        Parameters
        ----------
        scores : array-like of float
            Scores of new points (the calibrated classifier's decision values).

        Returns
        -------
        numpy.ndarray
            The merged probability of y = 1 for each score.

        Raises
        ------
        csvm_stats.exceptions.DataError
            A score is NaN or infinite.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.probability.venn_abers import VennAbers
        >>> va = VennAbers.fit(np.array([-2.0, -1.0, 0.5, 1.0, 2.0]), np.array([0, 0, 1, 0, 1]))
        >>> va.predict([-3.0, 3.0]).shape
        (2,)
        """
        p0, p1 = self.interval(scores)
        return merge(p0, p1)

    def threshold(self, score: float = 0.0) -> float:
        """The merged probability at ``score``: every score >= it has at least this probability.

        Parameters
        ----------
        score : float, default 0.0
            The score at which to read the merged probability.

        Returns
        -------
        float
            The merged probability at ``score``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            A score is NaN or infinite.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.probability.venn_abers import VennAbers
        >>> va = VennAbers.fit(np.array([-2.0, -1.0, 0.5, 1.0, 2.0]), np.array([0, 0, 1, 0, 1]))
        >>> 0.0 <= va.threshold(0.0) <= 1.0
        True
        """
        return float(self.predict(np.array([score]))[0])

    @property
    def constant(self) -> bool:
        """True when all calibration scores are equal (a constant decision function)."""
        return self.scores.size == 1


def merge(p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """The point probability :math:`p_1 / (1 - p_0 + p_1)` of an interval (Vovk et al. 2015)."""
    return p1 / (1.0 - p0 + p1)


#: Bootstrap resamples averaged by :func:`bagged` (the cross-fitted routes of several classes and of Neyman-Pearson).
DEFAULT_BAGS = 20


def bagged(scores, labels, bags: int = DEFAULT_BAGS, seed: int = 0) -> VennAbers:
    r"""The slot-by-slot average of the Venn-Abers predictors of ``bags`` bootstrap resamples.

    Each resample draws n of the n calibration pairs with replacement; its
    predictor gives every slot of the full sample's scores its own
    :math:`(p_0, p_1)` (a resample's scores are a subset of the full sample's,
    so a slot of the full sample lies in one slot of the resample), and the
    result stores their means :math:`\bar p_0 \le \bar p_1`. Averaging step
    functions whose steps sit at different scores lowers the variance of the
    isotonic fit (bagging, Breiman 1996) and keeps both non-decreasing in the
    score. The bootstrap resamples are not exchangeable with a new point, so
    the averaged interval has no finite-sample guarantee: this is for routes
    that have none anyway (cross-fitting); ``seed`` makes it reproducible.
    """
    s, y = check_scores(scores, "calibration scores"), np.asarray(labels)
    full = VennAbers.fit(s, y)  # validates, and gives the slots
    c, n = full.scores, s.size
    rng = np.random.default_rng(seed)
    total = np.zeros((2, 2 * c.size + 1))
    for _ in range(bags):
        draw = rng.integers(0, n, n)
        resample = VennAbers.fit(s[draw], y[draw])
        below = np.searchsorted(resample.scores, c)  # the resample's scores below each c_j
        present = resample.scores[np.minimum(below, resample.scores.size - 1)] == c
        slot = np.empty(2 * c.size + 1, dtype=int)
        slot[0::2] = 2 * np.r_[below, resample.scores.size]  # strictly between c_{j-1} and c_j, or above all
        slot[1::2] = 2 * below + present  # equal to c_j: tied in the resample if it drew c_j
        total += resample._values(slot)
    return VennAbers(c, total[0] / bags, total[1] / bags, full.n, full.n_positive)
