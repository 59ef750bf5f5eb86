r"""Labels of several classes and the split stratified by class.

:class:`ClassCoding` maps the user's labels to class positions ``0..K-1``
(the order of a Categorical's categories, else sorted values, as R's
``factor()`` orders them) and back, keeping the response's dtype.
:func:`split_by_class` draws the training, anchor and held-out samples within
each class, as :func:`csvm_stats.preprocessing.design.split_samples` does for two classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.preprocessing.design import SampleSplit, response_values, sorted_levels, split_samples
from csvm_stats.exceptions import DataError
from csvm_stats.preprocessing.wording import current_front_end


@dataclass(frozen=True)
class ClassCoding:
    """The class labels in the user's coding, in order; ``dtype`` is the response's dtype."""

    levels: tuple[Any, ...]
    name: str | None = None
    dtype: Any = None

    @property
    def n_classes(self) -> int:
        return len(self.levels)

    def position(self, label: Any) -> int:
        """The position of ``label`` among the levels (an unknown label is an error)."""
        for k, level in enumerate(self.levels):
            if level == label or str(level) == str(label):
                return k
        raise DataError(f"{label!r} is not one of the response's classes {list(self.levels)}.")

    def encode(self, labels: Any) -> np.ndarray:
        """Labels to class positions; missing or unknown labels are an error."""
        values, _ = response_values(labels)
        lookup = {level: k for k, level in enumerate(self.levels)}
        raw = values.to_numpy(dtype=object)
        out = np.array([lookup.get(v, -1) for v in raw], dtype=int)
        if np.any(out < 0):
            bad = sorted({repr(v) for v in raw[out < 0]})
            raise DataError(f"The response has label(s) {', '.join(bad)} outside the classes {list(self.levels)}.")
        return out

    def decode(self, positions: np.ndarray, index: pd.Index | None = None) -> pd.Series:
        """Class positions back to the user's labels (and dtype)."""
        labels = np.asarray(self.levels, dtype=object)[np.asarray(positions, dtype=int)]
        out = pd.Series(labels, index=index, name=self.name, dtype=object)
        return out if self.dtype is None else out.astype(self.dtype)


#: A numeric response with more distinct values than this is refused unless they are class codes
#: (:func:`encode_classes`).
MAX_NUMERIC_CLASSES = 20


def _consecutive_integers(levels: Sequence[Any]) -> bool:
    """Are the sorted numeric ``levels`` the integers from the first to the last, each once (class codes)?"""
    values = np.asarray(levels, dtype=float)
    return bool(np.all(values == np.round(values)) and values[-1] - values[0] + 1 == values.size)


def encode_classes(labels: Any) -> tuple[ClassCoding, np.ndarray]:
    """Find the classes (at least two) and code the labels as positions.

    A numeric response with more than :data:`MAX_NUMERIC_CLASSES` distinct
    values is refused unless they are consecutive integers (class codes such as
    scikit-learn's ``LabelEncoder`` gives): it is a measurement (a wrong column),
    not class codes, and would be fitted as that many classes. Text and
    Categorical responses have no such limit.
    """
    values, name = response_values(labels)
    if isinstance(values.dtype, pd.CategoricalDtype):
        used = set(values.unique().tolist())
        levels = tuple(c for c in values.cat.categories if c in used)
    else:
        levels = sorted_levels(values)
        numeric = pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype)
        if numeric and len(levels) > MAX_NUMERIC_CLASSES and not _consecutive_integers(levels):
            what = f"the response {name!r}" if name is not None else "the response"
            python = current_front_end() == "python"
            codes = ("make them text or a Categorical (df[column].astype(str))" if python
                     else "give them a form that is not a number (e.g. a prefix)")
            raise DataError(
                f"{what} holds {len(levels)} distinct numbers ({levels[0]!r} to {levels[-1]!r}); a classifier "
                f"would fit one class per number. Choose a response of class labels, or group the values into "
                f"classes{' (pd.cut)' if python else ''}; if the numbers are class codes, {codes}."
            )
    if len(levels) < 2:
        raise DataError(f"The response has a single class {list(levels)}; a classifier needs at least two.")
    dtype = pd.CategoricalDtype(levels) if isinstance(values.dtype, pd.CategoricalDtype) else values.dtype
    coding = ClassCoding(levels, name, dtype)
    return coding, coding.encode(values)


def split_by_class(y: np.ndarray, fractions: Sequence[float], random_state: int | None) -> SampleSplit:
    """Stratified random split into training, anchor and held-out rows (classes in position order)."""
    return split_samples(y, fractions, random_state, classes=np.unique(y))
