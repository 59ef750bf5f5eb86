"""A neutral description of an R object, shared by every way of reading one.

R objects reach Python by two routes: through an embedded R (rpy2) and
through the pure-Python reader of R's serialisation format (``rdata``). Both
are first translated into the same small tree of :class:`RNode` values and
converted to pandas by one function (:mod:`r_bridge.to_pandas`), so the two
routes cannot disagree on types or missing values.

An atomic R vector is stored as a numpy array plus a boolean mask of R's
``NA`` entries (``NaN`` that is not ``NA`` stays ``NaN`` and unmasked). A
generic vector (R ``list``) holds its elements as a tuple of nodes.
Attributes (``names``, ``dim``, ``dimnames``, ``class``, ``levels``,
``row.names``, ...) are nodes keyed by name, in R's order.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

#: R's integer (and logical) missing value, the smallest 32-bit integer.
NA_INTEGER = np.iinfo(np.int32).min
#: The low word of R's double ``NA``: a quiet NaN with payload 1954.
NA_REAL_PAYLOAD = 1954


class RType(enum.Enum):
    """The R storage types the bridge understands."""

    NULL = "NULL"
    LOGICAL = "logical"
    INTEGER = "integer"
    DOUBLE = "double"
    COMPLEX = "complex"
    CHARACTER = "character"
    LIST = "list"


#: numpy dtype of the ``values`` array of each atomic type.
ATOMIC_DTYPES: dict[RType, np.dtype] = {
    RType.LOGICAL: np.dtype(np.int32),
    RType.INTEGER: np.dtype(np.int32),
    RType.DOUBLE: np.dtype(np.float64),
    RType.COMPLEX: np.dtype(np.complex128),
    RType.CHARACTER: np.dtype(object),
}


@dataclass(frozen=True)
class RNode:
    """One R object: storage type, values, NA mask and attributes.

    ``values`` is a 1-d numpy array (dtype from :data:`ATOMIC_DTYPES`; a
    character vector holds ``str`` or ``None`` for ``NA``) for atomic types,
    a tuple of :class:`RNode` for ``LIST`` and ``None`` for ``NULL``.
    ``na`` is a boolean array of the same length for atomic types.
    """

    rtype: RType
    values: np.ndarray | tuple[RNode, ...] | None = None
    na: np.ndarray | None = None
    attributes: dict[str, RNode] = field(default_factory=dict)

    def __len__(self) -> int:
        return 0 if self.values is None else len(self.values)

    def attribute_strings(self, name: str) -> list[str | None] | None:
        """The attribute ``name`` as a list of strings, or ``None`` if absent."""
        node = self.attributes.get(name)
        if node is None or node.rtype is RType.NULL:
            return None
        if node.rtype is not RType.CHARACTER:
            return [None if missing else str(value) for value, missing in zip(node.values, node.na, strict=True)]
        return list(node.values)

    @property
    def classes(self) -> list[str]:
        """The R ``class`` attribute (empty when the object has none)."""
        return [c for c in self.attribute_strings("class") or [] if c is not None]


def atomic(rtype: RType, values: np.ndarray, na: np.ndarray, attributes: dict[str, RNode] | None = None) -> RNode:
    """Build an atomic node, checking the dtype and the mask's shape."""
    values = np.asarray(values, dtype=ATOMIC_DTYPES[rtype]).reshape(-1)
    na = np.asarray(na, dtype=bool).reshape(-1)
    if na.shape != values.shape:
        raise ValueError(f"NA mask has {na.size} entries for {values.size} values")
    return RNode(rtype, values, na, dict(attributes or {}))


def r_double_na_mask(values: np.ndarray) -> np.ndarray:
    """Which doubles are R's ``NA`` (payload 1954) rather than a plain ``NaN``."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    low_words = values.view(np.uint64) & np.uint64(0xFFFFFFFF)
    return np.isnan(values) & (low_words == NA_REAL_PAYLOAD)


def strings(values: list[str | None], attributes: dict[str, RNode] | None = None) -> RNode:
    """A character vector; ``None`` entries are ``NA``."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return atomic(RType.CHARACTER, array, [v is None for v in values], attributes)
