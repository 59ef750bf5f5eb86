"""What a nested cross-validation asks for and measures: criteria, rates, fold preprocessing, grids, CSVM specs.

The protocol using them is :mod:`csvm_stats.models.tuning`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from csvm_stats.preprocessing.design import Standardizer
from csvm_stats.exceptions import DataError

Criterion = Literal["accuracy", "gmean", "youden"]
CRITERIA: tuple[str, ...] = ("accuracy", "gmean", "youden")
PROTOCOLS: tuple[str, ...] = ("fast", "paper")


# --------------------------------------------------------------------------- rates


@dataclass(frozen=True)
class Rates:
    """True positive rate, true negative rate and accuracy of one set of predictions."""

    tpr: float
    tnr: float
    acc: float

    @classmethod
    def from_predictions(cls, y: np.ndarray, predicted: np.ndarray) -> Rates:
        """Rates of ``predicted`` against ``y`` (both in {-1, +1}); NaN for an absent class."""
        pos, neg = y > 0, y < 0
        tpr = float(np.mean(predicted[pos] > 0)) if pos.any() else math.nan
        tnr = float(np.mean(predicted[neg] < 0)) if neg.any() else math.nan
        return cls(tpr, tnr, float(np.mean(predicted == y)))

    def score(self, criterion: str) -> float:
        """The selection criterion: accuracy, G-mean sqrt(TPR TNR) or Youden TPR + TNR - 1."""
        if criterion == "accuracy":
            return self.acc
        if criterion == "gmean":
            return math.sqrt(self.tpr * self.tnr)
        if criterion == "youden":
            return self.tpr + self.tnr - 1.0
        raise DataError(f"criterion must be one of {CRITERIA}, got {criterion!r}.")

    def rate(self, name: str) -> float:
        """``"tpr"``, ``"tnr"`` or ``"acc"``."""
        return getattr(self, name)


def _mean_rates(rates: Sequence[Rates]) -> Rates:
    return Rates(*(float(np.mean([getattr(r, k) for r in rates])) for k in ("tpr", "tnr", "acc")))


# --------------------------------------------------------------------------- preprocessing


@dataclass(frozen=True)
class FoldPreprocessor:
    """Impute, encode and standardise with statistics of a training part only.

    Numeric columns: missing values get the training median. Categorical
    columns (pandas Categorical): missing values get the training mode, then
    one 0/1 dummy per category except the first (the categories come from the
    column's dtype, so every fold has the same columns). Finally every column
    is standardised with the training mean and population SD (a column
    constant on the training part is divided by its magnitude, see Standardizer). Text columns that are not
    Categorical are refused.
    """

    columns: tuple[str, ...]
    fill: dict[str, object]
    levels: dict[str, tuple[object, ...]]
    standardizer: Standardizer

    @classmethod
    def fit(cls, X: pd.DataFrame) -> FoldPreprocessor:
        """Learn medians, modes and scaling from the training part ``X``."""
        X = _as_frame(X)
        fill: dict[str, object] = {}
        levels: dict[str, tuple[object, ...]] = {}
        for column in X.columns:
            values = X[column]
            if isinstance(values.dtype, pd.CategoricalDtype):
                levels[column] = tuple(values.cat.categories)
                counts = values.value_counts(sort=False)
                if counts.sum() == 0:
                    raise DataError(f"column {column!r} is missing in every training row; drop it.")
                fill[column] = counts.idxmax()
            elif pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
                if values.notna().sum() == 0:
                    raise DataError(f"column {column!r} is missing in every training row; drop it.")
                fill[column] = float(values.astype(float).median())
            else:
                raise DataError(
                    f"column {column!r} has dtype {values.dtype}; convert text columns to "
                    "pandas Categorical (X[col].astype('category')) so they get dummies."
                )
        partial = cls(tuple(X.columns), fill, levels, Standardizer.identity(0))
        encoded = partial._encode(X)
        return replace(partial, standardizer=Standardizer.fit(encoded))

    def _encode(self, X: pd.DataFrame) -> np.ndarray:
        blocks = []
        for column in self.columns:
            values = X[column]
            if column in self.levels:
                filled = values.fillna(self.fill[column])
                blocks.extend(
                    (filled == level).to_numpy(dtype=float)[:, None] for level in self.levels[column][1:]
                )
            else:
                blocks.append(values.astype(float).fillna(self.fill[column]).to_numpy()[:, None])
        return np.hstack(blocks) if blocks else np.empty((len(X), 0))

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        """Imputed, dummy-coded and standardised matrix of ``X`` (same columns as at fit)."""
        X = _as_frame(X)
        if tuple(X.columns) != self.columns:
            raise DataError("transform needs the columns seen at fit, in the same order.")
        return self.standardizer.transform(self._encode(X))

    @property
    def feature_names(self) -> list[str]:
        """Names of the output columns (``column[level]`` for dummies)."""
        names: list[str] = []
        for column in self.columns:
            if column in self.levels:
                names.extend(f"{column}[{level}]" for level in self.levels[column][1:])
            else:
                names.append(column)
        return names


def _as_frame(X) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    array = np.asarray(X, dtype=float)
    if array.ndim != 2:
        raise DataError(f"X must be two-dimensional, got shape {array.shape}.")
    return pd.DataFrame(array, columns=[f"x{k}" for k in range(array.shape[1])])


# --------------------------------------------------------------------------- specifications


@dataclass(frozen=True)
class Grid:
    """The (C, gamma) pairs searched; C is the CSVM's (``SVC`` gets ``C/2``).

    Parameters
    ----------
    C : tuple of float
        The C values (the CSVM's convention).
    gamma : tuple of float
        The RBF gamma values.

    Examples
    --------
    >>> from csvm_stats.models.tuning import Grid
    >>> len(Grid.paper().pairs())
    121
    """

    C: tuple[float, ...]
    gamma: tuple[float, ...]

    @classmethod
    def paper(cls) -> Grid:
        """C and gamma in 2^-5, ..., 2^5 (121 pairs), as in the paper.

        Returns
        -------
        Grid
            The 11 x 11 grid.

        Examples
        --------
        >>> from csvm_stats.models.tuning import Grid
        >>> len(Grid.paper().C)
        11
        """
        powers = tuple(2.0**k for k in range(-5, 6))
        return cls(powers, powers)

    def pairs(self) -> list[tuple[float, float]]:
        """All pairs, C in the outer loop and gamma in the inner loop.

        Returns
        -------
        list of tuple of float
            The (C, gamma) pairs.

        Raises
        ------
        csvm_stats.exceptions.DataError
            An empty grid or a non-positive value.

        Examples
        --------
        >>> from csvm_stats.models.tuning import Grid
        >>> Grid((1.0, 2.0), (0.5,)).pairs()
        [(1.0, 0.5), (2.0, 0.5)]
        """
        if not self.C or not self.gamma or min(self.C) <= 0 or min(self.gamma) <= 0:
            raise DataError("the grid needs at least one positive C and one positive gamma.")
        return [(c, g) for c in self.C for g in self.gamma]


@dataclass(frozen=True)
class RateRequirement:
    """One constrained rate: a fixed ``minimum``, or ``min(at_most, rate0 + above_svm)``.

    ``rate0`` is the tuned SVM's rate; ``at_most=1`` is the paper's cap. A
    lower cap keeps a target that a finite held-out sample can certify
    (``p0**n <= alpha`` needs n > log(alpha) / log(p0) class points).

    Parameters
    ----------
    rate : {"tpr", "tnr"}
        The constrained rate.
    minimum : float or None
        A fixed required rate.
    above_svm : float or None
        Required improvement over the tuned SVM's rate (exactly one of
        ``minimum`` and ``above_svm``).
    at_most : float, default 1.0
        Cap of ``rate0 + above_svm``.

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown rate, both or neither of ``minimum`` and ``above_svm``, or a
        cap outside (0, 1].

    Examples
    --------
    >>> from csvm_stats.models.tuning import RateRequirement
    >>> RateRequirement("tpr", above_svm=0.025).rate
    'tpr'
    """

    rate: Literal["tpr", "tnr"]
    minimum: float | None = None
    above_svm: float | None = None
    at_most: float = 1.0

    def __post_init__(self) -> None:
        if self.rate not in ("tpr", "tnr"):
            raise DataError(f"rate must be 'tpr' or 'tnr', got {self.rate!r}.")
        if (self.minimum is None) == (self.above_svm is None):
            raise DataError("give exactly one of minimum= (a fixed target) and above_svm= (an improvement).")
        if not 0.0 < self.at_most <= 1.0:
            raise DataError(f"at_most must lie in (0, 1], got {self.at_most!r}.")

    def target(self, svm: Rates) -> float:
        """p0 for this fold, given the tuned SVM's inner cross-validated rates.

        Parameters
        ----------
        svm : Rates
            The tuned SVM's inner cross-validated rates.

        Returns
        -------
        float
            The target p0 of this fold.

        Examples
        --------
        >>> from csvm_stats.models.tuning import RateRequirement
        >>> RateRequirement("tpr", minimum=0.9).target(None)
        0.9
        """
        if self.minimum is not None:
            return float(self.minimum)
        return min(self.at_most, svm.rate(self.rate) + float(self.above_svm))

    @property
    def label(self) -> str:
        name = self.rate.upper()
        if self.minimum is not None:
            return f"{name} >= {self.minimum:g}"
        improved = f"{name}0 + {self.above_svm:g}"
        return f"{name} >= {improved}" if self.at_most == 1.0 else f"{name} >= min({self.at_most:g}, {improved})"


@dataclass(frozen=True)
class CSVMSpec:
    """A constrained model to evaluate: requirement, tuning criterion, margin, guarantee.

    Parameters
    ----------
    requirement : RateRequirement
        The constrained rate.
    criterion : {"accuracy", "gmean", "youden"}, default "accuracy"
        Tuning criterion of the inner loop.
    bound : {"hoeffding", "binomial", "none"}, default "hoeffding"
        Margin of the anchor count.
    alpha : float, default 0.05
        Level of the margin.
    guarantee : bool, default False
        The held-out variant (intercept set on H by the order-statistic rule).

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown criterion.

    Examples
    --------
    >>> from csvm_stats.models.tuning import CSVMSpec, RateRequirement
    >>> CSVMSpec(RateRequirement("tnr", minimum=0.65), criterion="gmean").name
    'CSVM TNR >= 0.65 (gmean, hoeffding)'
    """

    requirement: RateRequirement
    criterion: Criterion = "accuracy"
    bound: Literal["hoeffding", "binomial", "none"] = "hoeffding"
    alpha: float = 0.05
    guarantee: bool = False

    def __post_init__(self) -> None:
        if self.criterion not in CRITERIA:
            raise DataError(f"criterion must be one of {CRITERIA}, got {self.criterion!r}.")

    @property
    def name(self) -> str:
        extra = ", held-out guarantee" if self.guarantee else ""
        return f"CSVM {self.requirement.label} ({self.criterion}, {self.bound}{extra})"
