r"""From user data to the optimiser's inputs: label coding, sample split, scaling.

* :class:`LabelCoding` maps the user's two labels (0/1, bool, strings or a
  pandas Categorical) to :math:`y \in \{-1, +1\}` with the positive class
  named, and back again.
* :class:`SampleSplit` holds the three disjoint samples of a fit: the training
  sample I (the hinge loss), the anchor sample J (the rate constraints) and the
  held-out certification sample H, which the optimisation never sees and on
  which the confidence statements are made. :func:`split_samples` draws them
  stratified by class with a seeded generator.
* :class:`Standardizer` centres and scales the columns with statistics of
  :math:`I \cup J` only (never H, so that H stays independent of the
  classifier) and maps a linear rule back to the original units:
  :math:`w'((x - m)/s) + b = (w/s)'x + (b - (w/s)'m)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError, warn_at_caller
from csvm_stats.preprocessing.text_order import r_level_order
from csvm_stats.preprocessing.wording import option

#: Default shares of the data for the training, anchor and held-out samples.
DEFAULT_FRACTIONS: tuple[float, float, float] = (0.5, 0.25, 0.25)


@dataclass(frozen=True)
class LabelCoding:
    """The two class labels in the user's coding and which one is positive.

    ``levels`` are in the order of the data's levels (the used categories of a
    Categorical, else sorted values: numbers by value, text by code point,
    where R's ``factor()`` uses the locale's collation);
    ``positive`` is one of them. ``dtype`` is the response's dtype, so that
    predictions come back as the same type (a Categorical keeps its categories).
    """

    levels: tuple[Any, Any]
    positive: Any
    name: str | None = None
    dtype: Any = None

    @property
    def negative(self) -> Any:
        """The label that is coded -1."""
        return self.levels[0] if self.levels[1] == self.positive else self.levels[1]

    def encode(self, labels: Any) -> np.ndarray:
        """Labels in the user's coding to a float array of -1/+1; unknown labels are an error."""
        values, _ = response_values(labels)
        is_pos = values.to_numpy(dtype=object) == self.positive
        is_neg = values.to_numpy(dtype=object) == self.negative
        unknown = ~(is_pos | is_neg)
        if unknown.any():
            bad = sorted({repr(v) for v in values[unknown].unique()})
            raise DataError(
                f"The response has label(s) {', '.join(bad)} outside the two classes "
                f"{self.levels[0]!r} and {self.levels[1]!r}; CSVM is a binary classifier."
            )
        return np.where(is_pos, 1.0, -1.0)

    def decode(self, signs: np.ndarray, index: pd.Index | None = None) -> pd.Series:
        """-1/+1 (or a score's sign, 0 counting as positive) back to the user's labels."""
        labels = np.where(np.asarray(signs) >= 0, self.positive, self.negative)
        out = pd.Series(labels, index=index, name=self.name, dtype=object)
        return out if self.dtype is None else out.astype(self.dtype)


def response_values(labels: Any) -> tuple[pd.Series, str | None]:
    """The response as a Series and its name; missing values are an error."""
    values = _as_series(labels)
    if values.isna().any():
        raise DataError(
            f"The response has {int(values.isna().sum())} missing value(s); remove or impute them before fitting."
        )
    return values, None if values.name is None else str(values.name)


def _as_series(labels: Any) -> pd.Series:
    if isinstance(labels, pd.Series):
        return labels
    if isinstance(labels, (pd.Categorical, pd.Index)):
        return pd.Series(labels)
    arr = np.asarray(labels)
    if arr.ndim != 1:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        else:
            raise DataError(f"The response must be one-dimensional, got shape {arr.shape}.")
    return pd.Series(arr)



def sorted_levels(values: pd.Series) -> tuple:
    """The distinct labels of a non-categorical response, sorted; mixed label types are an error."""
    uniques = pd.unique(values.to_numpy(dtype=object))
    try:
        return tuple(sorted(uniques.tolist()))
    except TypeError:
        raise DataError(
            f"The response mixes label types ({sorted({type(u).__name__ for u in uniques})}); use one type."
        ) from None


def _warn_if_case_decides(levels: tuple) -> None:
    """Warn when R's order of two text labels differs from Python's, so R would take the other positive class."""
    if not all(isinstance(v, str) for v in levels) or r_level_order(levels)[1] == levels[1]:
        return
    warn_at_caller(
        f"the positive class is {levels[1]!r}, the second of {list(levels)} in code-point order (capitals and "
        f"accented letters sort apart); R's csvm() orders text by the locale (ignoring case and accents first) and "
        f"would take {levels[0]!r}. Say which class is positive ({option('positive', levels[1])} or "
        f"{option('positive', levels[0])}) to fit the same model everywhere."
    )


def encode_labels(labels: Any, positive: Any = None) -> tuple[LabelCoding, np.ndarray]:
    """Find the two classes, choose the positive one and code the labels as -1/+1.

    The default positive class follows R's convention: the second level
    (``1`` for 0/1, ``True`` for bool, the second string in code-point order,
    the second used category of a Categorical). A Categorical must have
    exactly two used categories (unused ones are dropped, as R's
    ``drop.unused.levels`` and the multiclass model drop them); other label
    types exactly two distinct values. Strings are sorted by code point
    (``"Yes" < "no"``), where R sorts by the locale's collation, which ignores
    case and accents first (``"no" < "Yes"``, ``"a" < "A"``; see
    :mod:`~csvm_stats.preprocessing.text_order`): when the two orders pick
    different positive classes and ``positive`` is not given, a warning names
    the positive class chosen.
    """
    values, name = response_values(labels)
    if isinstance(values.dtype, pd.CategoricalDtype):
        used = set(values.unique().tolist())
        categories = tuple(c for c in values.cat.categories if c in used)
        if len(categories) != 2:
            raise DataError(
                f"The response is a Categorical with {len(categories)} used categories {list(categories)[:6]}; "
                "CSVM needs exactly two. Recode the response into two classes, or require per-class recalls "
                "(recall_min) for the multiclass CSVM."
            )
        levels = categories
    else:
        levels = sorted_levels(values)
        if len(levels) > 2:
            raise DataError(
                f"The response has {len(levels)} distinct labels {list(levels)[:6]}; CSVM is a binary "
                "classifier. Recode the response into two classes."
            )
        if len(levels) < 2:
            raise DataError(
                f"The response has a single class {list(levels)}; CSVM needs examples of both classes."
            )
    if positive is None:
        positive = levels[1]
        if not isinstance(values.dtype, pd.CategoricalDtype):  # a Categorical's order is the user's
            _warn_if_case_decides(levels)
    elif not any(positive == lev for lev in levels):
        raise DataError(f"positive={positive!r} is not one of the response's classes {list(levels)}.")
    else:
        positive = next(lev for lev in levels if lev == positive)
    coding = LabelCoding((levels[0], levels[1]), positive, name, values.dtype)
    y = coding.encode(values)
    if np.unique(y).size < 2:
        raise DataError(
            f"Only the class {coding.decode(y[:1]).iloc[0]!r} occurs in the response; "
            "CSVM needs examples of both classes."
        )
    return coding, y


@dataclass(frozen=True)
class SampleSplit:
    """Positions (0-based rows) of the training, anchor and held-out samples."""

    train: np.ndarray
    anchor: np.ndarray
    holdout: np.ndarray

    def sizes(self) -> dict[str, int]:
        """Number of rows in each sample."""
        return {"train": self.train.size, "anchor": self.anchor.size, "holdout": self.holdout.size}


def _stratum_counts(n: int, fractions: Sequence[float]) -> np.ndarray:
    """Split ``n`` into integer parts proportional to ``fractions`` (largest remainder)."""
    raw = np.asarray(fractions, dtype=float) * n
    counts = np.floor(raw).astype(int)
    remainder = n - counts.sum()
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[:remainder]] += 1
    return counts


def check_fractions(fractions: Sequence[float]) -> tuple[float, float, float]:
    """Validate (train, anchor, holdout) shares: non-negative, train > 0, summing to 1."""
    if isinstance(fractions, (str, bytes)) or not hasattr(fractions, "__len__") or len(fractions) != 3:
        raise DataError(f"fractions must be (train, anchor, holdout), got {fractions!r}.")
    if any(isinstance(v, (str, bytes, bool)) for v in fractions):
        raise DataError(f"fractions must be three numbers (train, anchor, holdout), got {fractions!r}.")
    try:
        f = tuple(float(v) for v in fractions)
    except (TypeError, ValueError):
        raise DataError(f"fractions must be three numbers (train, anchor, holdout), got {fractions!r}.") from None
    if any(v < 0 or np.isnan(v) for v in f) or f[0] <= 0 or abs(sum(f) - 1.0) > 1e-9:
        raise DataError(
            f"fractions must be three non-negative shares summing to 1 with a positive training share, got {fractions!r}."
        )
    return f  # type: ignore[return-value]


def split_samples(
    y: np.ndarray, fractions: Sequence[float], random_state: int | None, classes: Sequence[Any] = (1.0, -1.0)
) -> SampleSplit:
    """Stratified random split of the rows into training, anchor and held-out samples.

    Within each class (taken in the order of ``classes``: +1 then -1 for the
    binary coding, class positions for several classes) the rows are permuted
    by ``numpy.random.default_rng(random_state)`` and cut into parts of sizes
    proportional to ``fractions`` (largest-remainder rounding), so each sample
    has (almost) the class balance of the data.
    """
    f = check_fractions(fractions)
    rng = np.random.default_rng(random_state)
    parts: list[list[np.ndarray]] = [[], [], []]
    for label in classes:
        rows = rng.permutation(np.flatnonzero(y == label))
        cuts = np.cumsum(_stratum_counts(rows.size, f))[:-1]
        for k, piece in enumerate(np.split(rows, cuts)):
            parts[k].append(piece)
    train, anchor, holdout = (np.sort(np.concatenate(p)) for p in parts)
    return SampleSplit(train, anchor, holdout)


def explicit_split(samples: Mapping[str, Sequence[int]], n: int) -> SampleSplit:
    """A user-given split: positions for ``"train"`` and ``"anchor"``, optionally ``"holdout"``.

    Without ``"holdout"`` the held-out sample is every row in neither of the
    other two. The samples must be disjoint; when ``"holdout"`` is given, the
    three must together cover every row (nothing is dropped silently).
    """
    unknown = set(samples) - {"train", "anchor", "holdout"}
    if unknown or not {"train", "anchor"} <= set(samples):
        raise DataError(
            "samples must be a mapping with keys 'train', 'anchor' and optionally 'holdout', "
            f"got keys {sorted(samples)}."
        )
    arrays: dict[str, np.ndarray] = {}
    for key, rows in samples.items():
        arr = np.asarray(rows)
        if arr.dtype == bool:
            raise DataError(f"samples[{key!r}] must hold row positions (integers), not a boolean mask; use np.flatnonzero(mask).")
        if arr.size and (arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= n):
            raise DataError(f"samples[{key!r}] must hold integer row positions in 0..{n - 1}.")
        if np.unique(arr).size != arr.size:
            raise DataError(f"samples[{key!r}] lists a row more than once.")
        arrays[key] = np.sort(arr.astype(np.intp))
    used = np.concatenate(list(arrays.values()))
    if np.unique(used).size != used.size:
        raise DataError("The training, anchor and held-out samples must be disjoint; some rows are in more than one.")
    if "holdout" in arrays:
        if used.size != n:
            raise DataError(
                f"The given samples cover {used.size} of {n} rows; every row must be in exactly one sample "
                "(leave out 'holdout' to make it the remaining rows)."
            )
        holdout = arrays["holdout"]
    else:
        holdout = np.setdiff1d(np.arange(n), used)
    if arrays["train"].size == 0:
        raise DataError("The training sample is empty; give it some rows.")
    return SampleSplit(arrays["train"], arrays["anchor"], holdout)


def column_moments(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Means, (population) standard deviations and a constant-column mask, in any unit.

    Each column is divided by its largest magnitude first, so columns in units
    of 1e300 or 1e-300 neither overflow nor underflow. A column is constant
    when its variance is within the rounding error of computing it,
    :math:`\hat\sigma^2 \le n\epsilon\hat\sigma^2 + (n\epsilonar x)^2` on the
    rescaled column (scikit-learn's ``StandardScaler`` rule): a relative
    criterion, so a column measured in units of 1e-13 is not constant.
    """
    magnitude = np.max(np.abs(X), axis=0) if X.shape[0] else np.ones(X.shape[1])
    magnitude = np.where(magnitude > 0, magnitude, 1.0)
    Z = X / magnitude
    mean, var = Z.mean(axis=0), Z.var(axis=0)
    n, eps = X.shape[0], np.finfo(np.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    return mean * magnitude, np.sqrt(var) * magnitude, constant


#: Magnitudes a column may have: values up to MAX_MAGNITUDE and non-constant columns spread at least
#: MIN_SPREAD (units of 1e300 and 1e-300 work and give the same rule as units of 1). Closer to the ends
#: of the double range, sums, differences and the rule's coefficients in original units, w / sd,
#: overflow or become subnormal (a column at +-1e308 gave w / sd = 2e-323, one significant bit).
MAX_MAGNITUDE = 1e305
MIN_SPREAD = 1e-305


def check_magnitudes(X: np.ndarray, names: Sequence[str] | None = None) -> None:
    """Refuse columns too large or too finely spread to standardise without over- or underflow, by name."""
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return
    magnitude = np.max(np.abs(X), axis=0)
    _, sd, constant = column_moments(X)
    large = np.flatnonzero(~np.isfinite(magnitude) | (magnitude > MAX_MAGNITUDE))
    small = np.flatnonzero(~constant & (sd < MIN_SPREAD))

    def label(j: int) -> str:
        return repr(str(names[j])) if names is not None else f"at position {j}"

    if large.size:
        j = int(large[0])
        raise DataError(
            f"the design column {label(j)} has values as large as {magnitude[j]:.3g} in magnitude (more than "
            f"{MAX_MAGNITUDE:g}), where standardising and converting the rule back to the original units overflow or "
            "lose all precision; rescale the column (other units, or a log) first."
        )
    if small.size:
        j = int(small[0])
        raise DataError(
            f"the design column {label(j)} varies by only {sd[j]:.3g} (less than {MIN_SPREAD:g}), where the rule's "
            "coefficient in original units would overflow; rescale the column first."
        )


@dataclass(frozen=True)
class Standardizer:
    """Column centring and scaling ``(x - mean) / scale``; a constant column is divided by its largest magnitude
    (1 for a column of zeros), so what rounding leaves of it after centring is of order 1e-16 in any unit (a
    column of 1e300 with noise in its last digits would otherwise keep residuals of 1e285, whose squares
    overflow)."""

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, X: np.ndarray) -> Standardizer:
        """Means and (population) standard deviations of the columns of ``X`` (:func:`column_moments`).

        Columns outside :data:`MAX_MAGNITUDE` / :data:`MIN_SPREAD` are refused (:func:`check_magnitudes`).
        """
        check_magnitudes(X)
        mean, sd, constant = column_moments(X)
        magnitude = np.max(np.abs(X), axis=0) if X.shape[0] else np.ones(X.shape[1])
        return cls(mean, np.where(constant, np.where(magnitude > 0, magnitude, 1.0), sd))

    @classmethod
    def identity(cls, p: int) -> Standardizer:
        """No scaling (mean 0, scale 1)."""
        return cls(np.zeros(p), np.ones(p))

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Apply ``(X - mean) / scale``; values beyond :data:`MAX_MAGNITUDE` or that overflow are an error."""
        large = np.abs(X) > MAX_MAGNITUDE
        if np.any(large):
            bad = np.flatnonzero(large.any(axis=0) if large.ndim == 2 else large)
            raise DataError(
                f"the data in design column position(s) {bad[:10].tolist()} have values beyond {MAX_MAGNITUDE:g} "
                "in magnitude, where the decision value overflows (standardising and the kernel or linear product); "
                "rescale the column (other units, or a log) first."
            )
        with np.errstate(over="ignore", invalid="ignore"):
            Z = (X - self.mean) / self.scale
        if not np.all(np.isfinite(Z)):
            bad = np.flatnonzero(~np.all(np.isfinite(Z), axis=0) if Z.ndim == 2 else ~np.isfinite(Z))
            raise DataError(
                f"the data in design column position(s) {bad[:10].tolist()} are infinite, undefined or so far from "
                "the fitted scale that standardising them overflows; remove or rescale those values."
            )
        return Z

    def to_original(self, coef: np.ndarray, intercept: float) -> tuple[np.ndarray, float]:
        """A linear rule on scaled columns expressed in the original units.

        A coefficient that overflows or becomes subnormal (a column's scale near the ends of the double
        range) is an error naming its position, never a rule with no significant digits.
        """
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            w = coef / self.scale
            b = float(intercept - w @ self.mean)
        tiny = np.finfo(np.float64).tiny
        bad = np.flatnonzero(~np.isfinite(w) | ((w != 0) & (np.abs(w) < tiny) & (coef != 0)))
        if bad.size or not np.isfinite(b):
            where = f"position(s) {bad[:10].tolist()}" if bad.size else "the intercept"
            raise DataError(
                f"the rule's coefficient at design column {where} overflows or loses its precision when it is "
                "converted to the original units (a column measured in units near the ends of the double range); "
                "rescale that column (other units) first."
            )
        return w, b
