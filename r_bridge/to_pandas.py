"""Convert an :class:`~r_bridge.rtree.RNode` to pandas and Python objects.

The mapping, identical for objects read through R and through ``rdata``:

=========================  ==================================================
R                          Python
=========================  ==================================================
``NULL``                   ``None``
data.frame                 ``pandas.DataFrame`` (row names as the index;
                           R's automatic row names become a RangeIndex)
matrix (2-d ``dim``)       ``pandas.DataFrame`` with the ``dimnames``
array (more dims)          ``numpy.ndarray`` in R's (column-major) layout
factor / ordered factor    ``Categorical`` (``NA`` -> missing code)
logical                    pandas ``boolean`` (``NA`` -> ``pd.NA``)
integer                    pandas ``Int32`` (``NA`` -> ``pd.NA``)
double                     ``float64`` (``NA`` and ``NaN`` -> ``NaN``)
complex                    ``complex128`` (``NA`` -> ``nan+nanj``)
character                  pandas ``string`` (``NA`` -> ``pd.NA``)
Date / POSIXct             ``datetime64`` (``NA`` -> ``NaT``)
other atomic vector        ``pandas.Series`` (``names`` as the index)
list                       ``dict`` if it has names, else ``list``
=========================  ==================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from r_bridge.rtree import RNode, RType

_SECONDS_PER_DAY = 86_400


def to_python(node: RNode) -> Any:
    """Convert one R object (see the module docstring for the mapping)."""
    if node.rtype is RType.NULL:
        return None
    if node.rtype is RType.LIST:
        if "data.frame" in node.classes:
            return _data_frame(node)
        return _list(node)
    dim = node.attributes.get("dim")
    if dim is not None:
        return _array(node, [int(d) for d in dim.values])
    names = node.attribute_strings("names")
    index = pd.Index(names, dtype=pd.StringDtype()) if names is not None else None
    return pd.Series(column_values(node), index=index)


def column_values(node: RNode) -> pd.api.extensions.ExtensionArray | np.ndarray:
    """The values of an atomic vector as a pandas-ready 1-d array."""
    classes = node.classes
    if "factor" in classes:
        return _factor(node)
    if "Date" in classes:
        return _datetime(node, unit_seconds=_SECONDS_PER_DAY, timezone=None)
    if "POSIXct" in classes:
        timezone = (node.attribute_strings("tzone") or [""])[0] or "UTC"
        return _datetime(node, unit_seconds=1, timezone=timezone)
    return _plain_values(node)


def _plain_values(node: RNode) -> pd.api.extensions.ExtensionArray | np.ndarray:
    values, na = node.values, node.na
    if node.rtype is RType.LOGICAL:
        return pd.arrays.BooleanArray(values.astype(bool) & ~na, na.copy())
    if node.rtype is RType.INTEGER:
        return pd.arrays.IntegerArray(np.where(na, 0, values).astype(np.int32), na.copy())
    if node.rtype is RType.DOUBLE:
        return values.astype(np.float64, copy=True)
    if node.rtype is RType.COMPLEX:
        return np.where(na, complex(np.nan, np.nan), values).astype(np.complex128)
    if node.rtype is RType.CHARACTER:
        items = [None if missing else value for value, missing in zip(values, na, strict=True)]
        return pd.array(items, dtype=pd.StringDtype())
    raise DataError(f"cannot convert R type {node.rtype.value!r} to a column")


def _factor(node: RNode) -> pd.Categorical:
    if node.rtype is not RType.INTEGER:
        raise DataError(f"R factor stored as {node.rtype.value}, expected integer codes")
    levels = node.attribute_strings("levels") or []
    codes = np.where(node.na, -1, node.values - 1).astype(np.int64)
    if codes.size and (codes.max() >= len(levels) or codes.min() < -1):
        raise DataError("R factor has codes outside its levels; the object is corrupt")
    categories = pd.Index(levels, dtype=object)
    return pd.Categorical.from_codes(codes, categories=categories, ordered="ordered" in node.classes)


def _datetime(node: RNode, unit_seconds: int, timezone: str | None) -> pd.DatetimeIndex:
    if node.rtype not in (RType.DOUBLE, RType.INTEGER):
        raise DataError(f"R date-time stored as {node.rtype.value}, expected numbers")
    seconds = np.where(node.na, np.nan, node.values.astype(np.float64)) * unit_seconds
    stamps = pd.to_datetime(seconds, unit="s").as_unit("us")
    return stamps.tz_localize("UTC").tz_convert(timezone) if timezone else stamps


def _names_or_positions(node: RNode) -> list[str]:
    names = node.attribute_strings("names")
    if names is None:
        return [f"[[{i + 1}]]" for i in range(len(node))]
    return [name if name else f"[[{i + 1}]]" for i, name in enumerate(names)]


def _list(node: RNode) -> dict[str, Any] | list[Any]:
    elements = [to_python(child) for child in node.values]
    if node.attribute_strings("names") is None:
        return elements
    keys = _names_or_positions(node)
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    if duplicated:
        raise DataError(
            f"R list has duplicated names {duplicated}; a dict cannot hold both. "
            "Rename the elements in R (make.unique(names(x))) before converting."
        )
    return dict(zip(keys, elements, strict=True))


def _row_index(node: RNode, n_rows: int) -> pd.Index:
    row_names = node.attributes.get("row.names")
    if row_names is None or row_names.rtype is RType.NULL:
        return pd.RangeIndex(n_rows)
    if row_names.rtype is RType.INTEGER:
        automatic_compact = len(row_names) == 2 and row_names.na[0]
        automatic_full = np.array_equal(row_names.values, np.arange(1, n_rows + 1))
        if automatic_compact or automatic_full:
            return pd.RangeIndex(n_rows)
        return pd.Index(row_names.values.astype(np.int64))
    return pd.Index(column_values(row_names))


def _data_frame(node: RNode) -> pd.DataFrame:
    names = _names_or_positions(node)
    columns: dict[str, Any] = {}
    lengths = set()
    for name, child in zip(names, node.values, strict=True):
        if child.rtype in (RType.LIST, RType.NULL) or "dim" in child.attributes:
            raise DataError(
                f"data.frame column {name!r} is a {child.rtype.value} or matrix column, "
                "which pandas cannot hold as one column; flatten it in R first"
            )
        columns[name] = column_values(child)
        lengths.add(len(child))
    if len(lengths) > 1:
        raise DataError(f"data.frame columns have different lengths {sorted(lengths)}")
    n_rows = lengths.pop() if lengths else _compact_row_count(node)
    frame = pd.DataFrame(columns, index=_row_index(node, n_rows))
    if len(frame.columns) != len(names):
        raise DataError("data.frame has duplicated column names; rename them in R first")
    return frame


def _compact_row_count(node: RNode) -> int:
    row_names = node.attributes.get("row.names")
    if row_names is None or row_names.rtype is RType.NULL:
        return 0
    if row_names.rtype is RType.INTEGER and len(row_names) == 2 and row_names.na[0]:
        return abs(int(row_names.values[1]))
    return len(row_names)


def _dimnames(node: RNode, axis: int, size: int) -> pd.Index:
    dimnames = node.attributes.get("dimnames")
    if dimnames is None or dimnames.rtype is not RType.LIST or dimnames.values[axis].rtype is RType.NULL:
        return pd.RangeIndex(size)
    return pd.Index(column_values(dimnames.values[axis]))


def _array(node: RNode, dim: list[int]) -> pd.DataFrame | np.ndarray:
    values = column_values(node)
    if len(dim) != 2:
        if isinstance(values, pd.api.extensions.ExtensionArray):
            values = values.to_numpy(dtype=object, na_value=None)
        return np.asarray(values).reshape(dim, order="F")
    n_rows, n_cols = dim
    index = _dimnames(node, 0, n_rows)
    columns = _dimnames(node, 1, n_cols)
    if isinstance(values, np.ndarray):
        return pd.DataFrame(values.reshape(dim, order="F"), index=index, columns=columns)
    data = {j: values[j * n_rows : (j + 1) * n_rows] for j in range(n_cols)}
    frame = pd.DataFrame(data, index=index)
    frame.columns = columns
    return frame
